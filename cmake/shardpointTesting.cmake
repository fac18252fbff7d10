# One way to register a test, for tests/, tests/runtime and tests/onnx:
#
#   shardpoint_add_test(NAME [SOURCES file.cpp ...] [LIBRARIES lib ...]
#                       [DEFINITIONS D=V ...] [RUNS_CLI])
#
# builds NAME from NAME.cpp (or SOURCES) with the doctest main and the
# project's warnings, and adds it to ctest under its name. RUNS_CLI makes it
# depend on the shardpoint program and tells it where that is.
function(shardpoint_add_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "RUNS_CLI" "" "SOURCES;LIBRARIES;DEFINITIONS")
  if(NOT arg_SOURCES)
    set(arg_SOURCES ${name}.cpp)
  endif()
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE shardpoint_test_main ${arg_LIBRARIES})
  target_compile_definitions(${name} PRIVATE ${arg_DEFINITIONS})
  if(arg_RUNS_CLI)
    add_dependencies(${name} shardpoint_cli)
    target_compile_definitions(${name} PRIVATE SHARDPOINT_CLI="$<TARGET_FILE:shardpoint_cli>")
  endif()
  shardpoint_project_options(${name})
  add_test(NAME ${name} COMMAND ${name})
endfunction()
