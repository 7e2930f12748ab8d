# The `docs` target: the generated reference, built only when asked
# (`cmake --build build --target docs`), into <build>/docs/:
#   c/html/        Doxygen over include/tpevent/ (docs/reference/Doxyfile.in), warnings
#                  as errors, so a public name without documentation fails;
#   python/        a pydoc page per module of the package, failing on a public name
#                  without a docstring (docs/reference/python_reference.py).
# Needs doxygen (Debian: doxygen) and a Python; without doxygen the target says so and
# fails. tests/docs registers docs.build on it.
find_package(Python3 COMPONENTS Interpreter QUIET)
find_program(TPEVENT_DOXYGEN doxygen)
set(TPEVENT_DOCS_DIR "${PROJECT_BINARY_DIR}/docs")
if(TPEVENT_DOXYGEN AND Python3_Interpreter_FOUND)
  configure_file("${PROJECT_SOURCE_DIR}/docs/reference/Doxyfile.in" "${TPEVENT_DOCS_DIR}/Doxyfile" @ONLY)
  set(tpevent_docs_commands
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${TPEVENT_DOCS_DIR}/c"
      COMMAND "${TPEVENT_DOXYGEN}" "${TPEVENT_DOCS_DIR}/Doxyfile")
else()
  set(tpevent_docs_commands
      COMMAND "${CMAKE_COMMAND}" -E echo "tpevent: the docs target needs doxygen (apt-get install doxygen) and python3"
      COMMAND "${CMAKE_COMMAND}" -E false)
endif()
set(tpevent_docs_python "")
if(TARGET tpevent_python_package AND Python3_Interpreter_FOUND)
  list(APPEND tpevent_docs_commands
       COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/docs/reference/python_reference.py"
               "$<TARGET_FILE_DIR:tpevent_python>/.." "${TPEVENT_DOCS_DIR}/python")
  set(tpevent_docs_python tpevent_python_package)
endif()
add_custom_target(docs ${tpevent_docs_commands}
                  WORKING_DIRECTORY "${TPEVENT_DOCS_DIR}"
                  COMMENT "tpevent: the C and Python reference into ${TPEVENT_DOCS_DIR}"
                  VERBATIM)
if(tpevent_docs_python)
  add_dependencies(docs ${tpevent_docs_python})
endif()
