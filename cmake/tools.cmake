# tools/: small programs the test scripts drive (not part of any library).
#   attn_optim_dump  optimizer steps for tests/parity/check_optim.py
add_executable(attn_optim_dump ${CMAKE_SOURCE_DIR}/tools/optim_dump.cpp)
target_link_libraries(attn_optim_dump PRIVATE attn_train attn_nn attn_data attn_autograd)
#   attn_attention_memory  peak memory of blockwise vs materialised attention (docs/performance.md)
add_executable(attn_attention_memory ${CMAKE_SOURCE_DIR}/tools/attention_memory.cpp)
target_link_libraries(attn_attention_memory PRIVATE attn_nn attn_autograd)
