# SPDX-License-Identifier: MIT OR Apache-2.0
# `cmake --install`: the CLI, the emulator's and the golden formats' headers and static libraries,
# a CMake package (find_package(w8a16check CONFIG) -> w8a16check::reference, w8a16check::golden,
# w8a16check::cli and w8a16check_add_verify_test),
# the recorded data the CLI replays (<prefix>/share/w8a16check/golden) and the documentation.
include(CMakePackageConfigHelpers)
set(W8A16_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/w8a16check CACHE STRING
    "Where the installed CMake package files go, relative to the prefix")

install(TARGETS w8a16_reference w8a16_golden EXPORT w8a16checkTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/reference/include/ ${PROJECT_SOURCE_DIR}/golden/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
# The kernel table golden/case.hpp reads its symbol names from (the only file of device/ installed).
install(FILES ${PROJECT_SOURCE_DIR}/device/include/w8a16/device/bodies.def
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/w8a16/device)
install(EXPORT w8a16checkTargets NAMESPACE w8a16check:: DESTINATION ${W8A16_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/w8a16checkConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/w8a16checkConfig.cmake
                              INSTALL_DESTINATION ${W8A16_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/w8a16checkConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/w8a16checkConfig.cmake ${PROJECT_BINARY_DIR}/w8a16checkConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/w8a16checkVerifyTest.cmake
        DESTINATION ${W8A16_INSTALL_CMAKEDIR})

install(TARGETS w8a16check RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# What `verify` replays by default, found beside the installed CLI (properties/cli/data_dir.hpp).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/golden/mma ${PROJECT_SOURCE_DIR}/golden/cases
                  ${PROJECT_SOURCE_DIR}/golden/recordings ${PROJECT_SOURCE_DIR}/golden/corpus
        DESTINATION ${CMAKE_INSTALL_DATADIR}/w8a16check/golden)
install(FILES ${PROJECT_SOURCE_DIR}/golden/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/w8a16check/golden)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_SOURCE_DIR}/LICENSE
              ${PROJECT_SOURCE_DIR}/LICENSE-MIT ${PROJECT_SOURCE_DIR}/LICENSE-APACHE
              ${PROJECT_SOURCE_DIR}/docs/NUMERICS.md ${PROJECT_SOURCE_DIR}/docs/KERNEL_ABI.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
