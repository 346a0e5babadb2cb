// Tensor: a contiguous, row-major array of attn::real with rank 0..4 and shared storage.
//
//   attn::Generator gen(0);
//   auto x = attn::Tensor::randn({2, 3}, gen);
//   auto y = x.reshape({3, 2});        // shares storage with x (no copy)
//   auto z = x.clone();                // independent copy
//   x.at({1, 2}) = 5.0f;               // element access (bounds-checked)
//   fmt::print("{}\n", x.str());       // numpy-like printing
//
// There are no strides: every tensor is contiguous, so a transpose is an explicit copy. That
// keeps kernels simple and makes the data obvious in a debugger (`p *x.data()@6`).
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "autograd/real.h"
#include "autograd/shape.h"

namespace attn {

// Owns one 64-byte aligned buffer. Tensors share it through a shared_ptr.
class Storage {
 public:
  explicit Storage(int64_t size);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  real* data() { return data_; }
  int64_t size() const { return size_; }

 private:
  real* data_ = nullptr;
  int64_t size_ = 0;
};

class Tensor {
 public:
  // A rank-0 tensor holding 0.
  Tensor();
  // Zeros of the given shape.
  explicit Tensor(const Shape& shape);

  static Tensor zeros(const Shape& shape);
  static Tensor ones(const Shape& shape);
  static Tensor full(const Shape& shape, real value);
  static Tensor scalar(real value);
  // Uninitialised contents: for kernels that overwrite every element.
  static Tensor empty(const Shape& shape);
  // 0, 1, ..., n-1 as a rank-1 tensor.
  static Tensor arange(int64_t n);
  static Tensor randn(const Shape& shape, Generator& gen, double stddev = 1.0);
  // Uniform in [lo, hi).
  static Tensor rand(const Shape& shape, Generator& gen, double lo = 0.0, double hi = 1.0);
  static Tensor from_vector(const Shape& shape, const std::vector<real>& values);
  static Tensor from_vector(const std::vector<real>& values);  // rank 1

  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  // Extent of one axis; negative axes count from the end.
  int64_t size(int axis) const;
  int64_t numel() const { return numel_; }

  real* data() { return storage_->data(); }
  const real* data() const { return storage_->data(); }
  real& operator[](int64_t flat_index) { return data()[flat_index]; }
  real operator[](int64_t flat_index) const { return data()[flat_index]; }
  // Bounds-checked multi-index access.
  real& at(std::initializer_list<int64_t> index);
  real at(std::initializer_list<int64_t> index) const;
  // The value of a one-element tensor.
  real item() const;

  // Same storage, new shape (same number of elements). One extent may be -1 (inferred).
  Tensor reshape(const Shape& shape) const;
  Tensor clone() const;
  std::vector<real> to_vector() const;
  bool shares_storage(const Tensor& other) const { return storage_ == other.storage_; }
  // How many tensors share this storage (1: nobody else can see writes to it).
  long storage_use_count() const { return storage_.use_count(); }

  // In-place helpers used by kernels and optimizers.
  void fill(real value);
  void copy_from(const Tensor& other);      // same numel
  Tensor& operator+=(const Tensor& other);  // same shape

  // numpy-like text, e.g. "[[1.0000, 2.0000],\n [3.0000, 4.0000]]".
  std::string str(int precision = 4) const;

 private:
  struct Uninitialised {};
  // Allocates without initialising (empty() and the zeros constructor); `op` names errors.
  Tensor(Uninitialised, const Shape& shape, const char* op);

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  int64_t numel_ = 1;
};

// Throws attn::Error "<op>: expected <what> <expected>, got <actual>" when shapes differ.
void check_same_shape(const Tensor& a, const Tensor& b, const char* op);

// True when shapes are equal and every |a-b| <= atol + rtol*|b|.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
// max |a - b| (shapes must match).
double max_abs_diff(const Tensor& a, const Tensor& b);

}  // namespace attn
