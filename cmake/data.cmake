# data/: tokenizer, batching, toy tasks, corpora. Needs only autograd's Tensor.
attn_add_library(attn_data data DEPS attn_autograd)
list(APPEND ATTN_TEST_LIBS attn_data)
