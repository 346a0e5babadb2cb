#include "autograd/tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "autograd/error.h"
#include "autograd/kernels/buffer_pool.h"
#include "autograd/kernels/parallel.h"

namespace attn {

namespace {
int64_t storage_bytes(int64_t size) {
  return std::max<int64_t>(size, 1) * static_cast<int64_t>(sizeof(real));
}

// The Storage object and its shared_ptr control block come from the pool too (one small
// block instead of a malloc per tensor).
std::shared_ptr<Storage> make_storage(int64_t size) {
  return std::allocate_shared<Storage>(kernels::PoolAllocator<Storage>{}, size);
}
}  // namespace

// Buffers come from a per-thread pool (kernels/buffer_pool.h): 64-byte aligned (cache lines,
// AVX loads), and reused step after step instead of going back to malloc.
Storage::Storage(int64_t size) : size_(size) {
  data_ = static_cast<real*>(kernels::pool_allocate(storage_bytes(size)));
  if (!data_)
    throw Error(fmt::format("Tensor: out of memory allocating {} bytes", storage_bytes(size)));
}

Storage::~Storage() {
  kernels::pool_release(data_, storage_bytes(size_));
}

Tensor::Tensor() : Tensor(Shape{}) {}

Tensor::Tensor(const Shape& shape) : Tensor(Uninitialised{}, shape, "Tensor") {
  std::memset(storage_->data(), 0, sizeof(real) * numel_);
}

Tensor Tensor::zeros(const Shape& shape) {
  return Tensor(shape);
}

Tensor Tensor::ones(const Shape& shape) {
  return full(shape, 1);
}

Tensor Tensor::full(const Shape& shape, real value) {
  Tensor t = empty(shape);
  t.fill(value);
  return t;
}

Tensor Tensor::scalar(real value) {
  return full({}, value);
}

Tensor::Tensor(Uninitialised, const Shape& shape, const char* op) : shape_(shape) {
  check_shape(shape, op);
  numel_ = attn::numel(shape);
  storage_ = make_storage(numel_);
}

Tensor Tensor::empty(const Shape& shape) {
  return Tensor(Uninitialised{}, shape, "Tensor::empty");
}

Tensor Tensor::arange(int64_t n) {
  if (n < 0) throw Error(fmt::format("Tensor::arange: n must be >= 0, got {}", n));
  Tensor t = empty({n});
  for (int64_t i = 0; i < n; ++i) t[i] = static_cast<real>(i);
  return t;
}

Tensor Tensor::randn(const Shape& shape, Generator& gen, double stddev) {
  Tensor t = empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<real>(gen.normal() * stddev);
  return t;
}

Tensor Tensor::rand(const Shape& shape, Generator& gen, double lo, double hi) {
  Tensor t = empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<real>(lo + (hi - lo) * gen.uniform());
  return t;
}

Tensor Tensor::from_vector(const Shape& shape, const std::vector<real>& values) {
  check_shape(shape, "Tensor::from_vector");
  if (attn::numel(shape) != static_cast<int64_t>(values.size()))
    throw Error(fmt::format("Tensor::from_vector: shape {} needs {} values, got {}",
                            shape_str(shape), attn::numel(shape), values.size()));
  Tensor t = empty(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

Tensor Tensor::from_vector(const std::vector<real>& values) {
  return from_vector({static_cast<int64_t>(values.size())}, values);
}

int64_t Tensor::size(int axis) const {
  return shape_[norm_axis(axis, rank(), "Tensor::size")];
}

real& Tensor::at(std::initializer_list<int64_t> index) {
  if (static_cast<int>(index.size()) != rank())
    throw Error(fmt::format("Tensor::at: {} indices for a tensor of shape {}", index.size(),
                            shape_str(shape_)));
  int64_t flat = 0;
  int axis = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape_[axis])
      throw Error(fmt::format("Tensor::at: index {} out of range on axis {} of shape {}", i, axis,
                              shape_str(shape_)));
    flat = flat * shape_[axis] + i;
    ++axis;
  }
  return data()[flat];
}

real Tensor::at(std::initializer_list<int64_t> index) const {
  return const_cast<Tensor*>(this)->at(index);
}

real Tensor::item() const {
  if (numel_ != 1)
    throw Error(
        fmt::format("Tensor::item: needs exactly one element, shape is {}", shape_str(shape_)));
  return data()[0];
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape target = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (infer >= 0) throw Error("reshape: only one extent may be -1, got " + shape_str(shape));
      infer = static_cast<int>(i);
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0 && known > 0) target[infer] = numel_ / known;
  check_shape(target, "reshape");
  if (attn::numel(target) != numel_)
    throw Error(fmt::format("reshape: cannot view a tensor of shape {} ({} elements) as {}",
                            shape_str(shape_), numel_, shape_str(shape)));
  Tensor t = *this;
  t.shape_ = target;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_);
  t.copy_from(*this);
  return t;
}

std::vector<real> Tensor::to_vector() const {
  return std::vector<real>(data(), data() + numel_);
}

void Tensor::fill(real value) {
  std::fill(data(), data() + numel_, value);
}

void Tensor::copy_from(const Tensor& other) {
  if (other.numel_ != numel_)
    throw Error(fmt::format("copy_from: {} vs {}", shape_str(shape_), shape_str(other.shape_)));
  real* dst = data();
  const real* src = other.data();
  kernels::parallel_chunks(
      numel_, 1, [&](int64_t b, int64_t n) { std::memcpy(dst + b, src + b, sizeof(real) * n); });
}

Tensor& Tensor::operator+=(const Tensor& other) {
  check_same_shape(*this, other, "Tensor::operator+=");
  real* a = data();
  const real* b = other.data();
  kernels::parallel_chunks(numel_, 1, [&](int64_t begin, int64_t n) {
    for (int64_t i = begin; i < begin + n; ++i) a[i] += b[i];
  });
  return *this;
}

namespace {
void append_str(const Tensor& t, int axis, int64_t offset, int precision, std::string& out) {
  if (t.rank() == 0) {
    out += fmt::format("{:.{}f}", t[0], precision);
    return;
  }
  const int64_t n = t.shape()[axis];
  int64_t inner = 1;
  for (int a = axis + 1; a < t.rank(); ++a) inner *= t.shape()[a];
  out += "[";
  for (int64_t i = 0; i < n; ++i) {
    if (i) {
      out += ",";
      out += axis == t.rank() - 1
                 ? " "
                 : std::string(t.rank() - axis - 1, '\n') + std::string(axis + 1, ' ');
    }
    if (axis == t.rank() - 1)
      out += fmt::format("{:.{}f}", t[offset + i], precision);
    else
      append_str(t, axis + 1, offset + i * inner, precision, out);
  }
  out += "]";
}
}  // namespace

std::string Tensor::str(int precision) const {
  std::string out;
  append_str(*this, 0, 0, precision, out);
  return out;
}

void check_same_shape(const Tensor& a, const Tensor& b, const char* op) {
  if (a.shape() != b.shape())
    throw Error(
        fmt::format("{}: shapes differ: {} vs {}", op, shape_str(a.shape()), shape_str(b.shape())));
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (!(std::abs(double(a[i]) - double(b[i])) <= atol + rtol * std::abs(double(b[i]))))
      return false;
  return true;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  check_same_shape(a, b, "max_abs_diff");
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
  return m;
}

}  // namespace attn
