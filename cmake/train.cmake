# train/: optimizers, schedules, trainer, checkpoints, metrics, decoding.
attn_add_library(attn_train train DEPS attn_nn attn_data)
list(APPEND ATTN_TEST_LIBS attn_train)
