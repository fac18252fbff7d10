# Compiles SOURCE with COMPILER (C++20, syntax only) and checks that it FAILS
# and that one of the first LINES lines of the compiler's output (not
# counting the chain of included files) contains EXPECT: the message must be
# where a user looks first.
#   cmake -DCOMPILER=... -DSOURCE=... -DINCLUDES="a;b" -DEXPECT=... -DLINES=N -P check.cmake
set(args -std=c++20 -fsyntax-only)
foreach(dir IN LISTS INCLUDES)
  list(APPEND args -I${dir})
endforeach()
execute_process(COMMAND ${COMPILER} ${args} ${SOURCE}
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(text "${out}${err}")
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled; it must not")
endif()
cmake_policy(SET CMP0007 NEW)
# The "In file included from ... / from ..." chain before the first message
# says where, not what: it is not counted.
string(REGEX REPLACE "In file included from[^\n]*\n" "" text "${text}")
string(REGEX REPLACE "\n[ ]+from [^\n]*" "" text "${text}")
string(REPLACE ";" "," text "${text}")
string(REPLACE "\n" ";" lines "${text}")
list(LENGTH lines count)
if(count GREATER LINES)
  list(SUBLIST lines 0 ${LINES} lines)
endif()
string(JOIN "\n" head ${lines})
string(FIND "${head}" "${EXPECT}" found)
if(found EQUAL -1)
  message(FATAL_ERROR "'${EXPECT}' is not in the first ${LINES} lines of the errors:\n${head}")
endif()
message(STATUS "ok: '${EXPECT}' in the first ${LINES} lines")
