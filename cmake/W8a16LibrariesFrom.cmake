# SPDX-License-Identifier: MIT OR Apache-2.0
# A Python module built over the static libraries of a tree already built, instead of building them
# again: tools/test-packaging's `pip install .` passes W8A16_LIBRARIES_FROM=<the tree tools/build
# built>, so the wheel's build compiles the module's own sources only. A plain `pip install .`
# leaves it empty and builds everything.
#
# w8a16_export_libraries(): in a top-level tree, writes <tree>/w8a16check-libraries.cmake, the
# libraries the module links, as imported targets w8a16check::<name>.
# w8a16_import_libraries(TREE): reads that file of TREE, which must be built from this checkout.
set(_w8a16_module_libraries w8a16_reference w8a16_golden w8a16_device w8a16_device_sim w8a16_properties)

function(w8a16_export_libraries)
  set_target_properties(w8a16_device PROPERTIES EXPORT_NAME device)
  set_target_properties(w8a16_device_sim PROPERTIES EXPORT_NAME device_sim)
  set_target_properties(w8a16_properties PROPERTIES EXPORT_NAME properties)
  export(TARGETS ${_w8a16_module_libraries} NAMESPACE w8a16check::
         FILE ${PROJECT_BINARY_DIR}/w8a16check-libraries.cmake)
  # The source tree it was built from, which the importing tree checks.
  file(WRITE ${PROJECT_BINARY_DIR}/w8a16check-libraries-source.txt "${PROJECT_SOURCE_DIR}\n")
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
  message(STATUS "w8a16check: the module links the libraries built in ${tree}")
endfunction()
