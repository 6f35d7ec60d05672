# aoti-minimize: CLI regression cases (no torch needed) and end-to-end runs on the example
# packages (a Python with torch must be found: no skipping). Included from
# tests/e2e/CMakeLists.txt, which defines AF_PYTHON and AF_EXAMPLES_DIR.
if(TARGET aoti-minimize)
  add_test(NAME cli.minimize
           COMMAND ${AF_PYTHON} ${PROJECT_SOURCE_DIR}/tests/cli/test_minimize_cli.py
                   --bin ${PROJECT_BINARY_DIR} --examples ${AF_EXAMPLES_DIR})
  add_test(NAME e2e.minimize
           COMMAND ${AF_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_minimize.py
                   --bin ${PROJECT_BINARY_DIR} --examples ${AF_EXAMPLES_DIR})
  set_tests_properties(e2e.minimize PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77)
  set_tests_properties(cli.minimize PROPERTIES TIMEOUT 300)
endif()
