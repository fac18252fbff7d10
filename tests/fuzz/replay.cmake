# The fuzz targets' regression inputs as ctests in every build (no libFuzzer
# needed): replay_<target> runs the target's LLVMFuzzerTestOneInput on each
# file of tests/fuzz/regressions/<target>/ (see replay_main.cpp). Included
# from tests/onnx, as the targets need the adapter.
set(fuzz_dir ${PROJECT_SOURCE_DIR}/tests/fuzz)
foreach(name fuzz_wire fuzz_config fuzz_commands)
  file(GLOB inputs CONFIGURE_DEPENDS ${fuzz_dir}/regressions/${name}/*)
  if(NOT inputs)
    continue()
  endif()
  add_executable(replay_${name} ${fuzz_dir}/${name}.cpp ${fuzz_dir}/replay_main.cpp)
  shardpoint_project_options(replay_${name})
  target_link_libraries(replay_${name} PRIVATE shardpoint::onnx onnx)
  target_include_directories(replay_${name} PRIVATE ${PROJECT_SOURCE_DIR}/onnx_adapter/src)
  add_test(NAME replay_${name} COMMAND replay_${name} ${fuzz_dir}/regressions/${name})
  # Some findings were hangs (a parser that never ends): fail, do not wait.
  set_tests_properties(replay_${name} PROPERTIES TIMEOUT 120)
endforeach()
if(TARGET replay_fuzz_commands)
  target_link_libraries(replay_fuzz_commands PRIVATE shardpoint_cli_lib)
endif()
