# tests/fuzz/: libFuzzer harnesses (configure with clang and -DATTN_FUZZ=ON; scripts/fuzz does it).
# The tree doubles as the sanitizer build (scripts/sanitize adds the tests and attnlab to it).
#   fuzz_safetensors  decode_safetensors on arbitrary bytes
#   fuzz_checkpoint   load_checkpoint of arbitrary bytes into a small model + Adam + stream
#   fuzz_options      `attnlab run X --field value` and `attnlab train --key value` parsing
#   fuzz_utf8         the UTF-8 splitter and the char/word tokenizers
#   fuzz_claims       the claims ledger's reader of results.json / config.json
#   fuzz_plugin       what a --plugin library declares: the --plugin words, its mixer rows
# Every library the harnesses link is compiled with coverage (fuzzer-no-link) plus ASan and
# UBSan, so a crash, a memory error or undefined behaviour anywhere in the loader stops the run.
option(ATTN_FUZZ "Build the libFuzzer harnesses (needs clang)" OFF)
if(NOT ATTN_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "ATTN_FUZZ needs clang (CXX=clang++): libFuzzer is part of clang")
endif()
set(ATTN_FUZZ_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer)
foreach(lib attn_autograd attn_nn attn_data attn_train attn_experiments attn_autograd_f64
            attn_nn_f64)
  if(TARGET ${lib})
    get_target_property(kind ${lib} TYPE)
    if(NOT kind STREQUAL "INTERFACE_LIBRARY")
      target_compile_options(${lib} PRIVATE ${ATTN_FUZZ_FLAGS} -fsanitize=fuzzer-no-link)
    endif()
  endif()
endforeach()
# The same tree is scripts/sanitize's: the unit suite, gradcheck and the CLI run on these
# sanitized libraries (configure with -DATTN_BUILD_TESTS=ON). The coverage hooks the fuzzer
# needs are no-ops in a program without libFuzzer.
foreach(exe attn_tests attn_gradcheck attnlab)
  if(TARGET ${exe})
    target_compile_options(${exe} PRIVATE ${ATTN_FUZZ_FLAGS})
    target_link_options(${exe} PRIVATE -fsanitize=address,undefined)
  endif()
endforeach()

function(attn_add_fuzzer name)
  add_executable(${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/${name}.cpp)
  target_link_libraries(${name} PRIVATE ${ARGN})
  target_compile_options(${name} PRIVATE ${ATTN_FUZZ_FLAGS} -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
endfunction()

attn_add_fuzzer(fuzz_safetensors attn_autograd)
attn_add_fuzzer(fuzz_checkpoint attn_train attn_nn attn_data attn_autograd)
attn_add_fuzzer(fuzz_options attn_experiments)
attn_add_fuzzer(fuzz_utf8 attn_data attn_autograd)
attn_add_fuzzer(fuzz_plugin attn_experiments)
# The reader needs only fmt and nlohmann::json: its one source is compiled into the harness
# (instrumented), so fuzzing it does not wait for the experiments' library.
add_executable(fuzz_claims ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_claims.cpp
                           ${CMAKE_SOURCE_DIR}/experiments/cli/claims_reader.cpp)
target_include_directories(fuzz_claims PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(fuzz_claims PRIVATE fmt::fmt nlohmann_json::nlohmann_json)
target_compile_options(fuzz_claims PRIVATE ${ATTN_FUZZ_FLAGS} -fsanitize=fuzzer)
target_link_options(fuzz_claims PRIVATE -fsanitize=fuzzer,address,undefined)
