# SPDX-License-Identifier: MIT OR Apache-2.0
# A Python module built over the static libraries of a tree already built, instead of building them
# again: tools/test-packaging's `pip install .` passes W8A16_LIBRARIES_FROM=<the tree tools/build
# built>, so the wheel's build compiles module.cpp alone. A plain `pip install .`
# leaves it empty and builds everything.
#
# w8a16_export_libraries(): in a top-level tree, writes <tree>/w8a16check-libraries.cmake, the
# libraries the module links (and its bindings, where that tree built the module), as imported
# targets w8a16check::<name>.
# w8a16_import_libraries(TREE): reads that file of TREE, which must be built from this checkout.
set(_w8a16_module_libraries w8a16_reference w8a16_golden w8a16_device w8a16_device_sim w8a16_properties)

function(w8a16_export_libraries)
  set_target_properties(w8a16_device PROPERTIES EXPORT_NAME device)
  set_target_properties(w8a16_device_sim PROPERTIES EXPORT_NAME device_sim)
  set_target_properties(w8a16_properties PROPERTIES EXPORT_NAME properties)
  set(libraries ${_w8a16_module_libraries})
  # The module's bindings (reports/), where this tree built the module, with the pybind11 and Python
  # versions they were compiled for.
  get_property(pybind_built_with GLOBAL PROPERTY W8A16_PYBIND_BUILT_WITH)
  if(TARGET w8a16_pybind)
    list(APPEND libraries w8a16_pybind)
  endif()
  export(TARGETS ${libraries} NAMESPACE w8a16check:: FILE ${PROJECT_BINARY_DIR}/w8a16check-libraries.cmake)
  # The source tree it was built from, which the importing tree checks.
  file(WRITE ${PROJECT_BINARY_DIR}/w8a16check-libraries-source.txt "${PROJECT_SOURCE_DIR}\n")
  file(WRITE ${PROJECT_BINARY_DIR}/w8a16check-libraries-pybind.txt "${pybind_built_with}\n")
endfunction()

function(w8a16_import_libraries tree)
  set(file ${tree}/w8a16check-libraries.cmake)
  if(NOT EXISTS ${file} OR NOT EXISTS ${tree}/w8a16check-libraries-source.txt)
    message(FATAL_ERROR "W8A16_LIBRARIES_FROM=${tree}: no ${file}: configure and build that tree first (tools/build)")
  endif()
  file(READ ${tree}/w8a16check-libraries-source.txt source)
  string(STRIP "${source}" source)
  file(REAL_PATH "${source}" source)
  file(REAL_PATH "${PROJECT_SOURCE_DIR}" here)
  if(NOT source STREQUAL here)
    message(FATAL_ERROR "W8A16_LIBRARIES_FROM=${tree} was built from ${source}, not from this checkout (${here})")
  endif()
  include(${file})
  foreach(t reference golden device device_sim properties)
    get_target_property(location w8a16check::${t} LOCATION)
    if(NOT EXISTS "${location}")
      message(FATAL_ERROR "W8A16_LIBRARIES_FROM=${tree}: ${location} is missing: build that tree first (tools/build)")
    endif()
  endforeach()
  # The bindings, if that tree built them: reports/CMakeLists.txt links them when its pybind11 and
  # Python are the ones they were compiled for, and compiles its own otherwise.
  set(pybind_file ${tree}/w8a16check-libraries-pybind.txt)
  if(TARGET w8a16check::pybind AND EXISTS ${pybind_file})
    file(READ ${pybind_file} built_with)
    string(STRIP "${built_with}" built_with)
    list(LENGTH built_with n)
    if(n EQUAL 2)
      list(GET built_with 0 v)
      list(GET built_with 1 py)
      set(W8A16_LIBRARIES_FROM_PYBIND11 ${v} PARENT_SCOPE)
      set(W8A16_LIBRARIES_FROM_PYTHON ${py} PARENT_SCOPE)
    endif()
  endif()
  message(STATUS "w8a16check: the module links the libraries built in ${tree}")
endfunction()
