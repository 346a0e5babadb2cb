# nn/: modules and layers (and nn/rnn/). Built twice like autograd: float and double (gradcheck).
attn_add_library(attn_nn nn DUAL DEPS attn_autograd DEPS_F64 attn_autograd_f64)
list(APPEND ATTN_TEST_LIBS attn_nn)
list(APPEND ATTN_GRADCHECK_LIBS attn_nn_f64)
