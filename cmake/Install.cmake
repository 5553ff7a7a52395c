# `cmake --install build --prefix P` installs KernelSight as a SystemC library for other projects:
# P/lib/libkernelsight.so (every module, policy and registered kind), the headers under
# P/include/kernelsight, the shipped data under P/share/kernelsight/data and a package config, so
# that `find_package(KernelSight)` gives the target KernelSight::kernelsight.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every object file of the project's libraries goes in (self-registering kinds included, and every
# public function, not only those our own objects call); only external libraries are linked.
set(KS_LIB_PARTS ks_base ks_sim ks_kernels ks_proto ks_metrics ks_launch_policy ks_interconnect ks_hw ks_policies ks_serving)
set(KS_LIB_OBJECTS)
foreach(part ${KS_LIB_PARTS})
  list(APPEND KS_LIB_OBJECTS $<TARGET_OBJECTS:${part}>)
endforeach()
add_library(kernelsight_lib SHARED ${KS_LIB_OBJECTS})
add_dependencies(kernelsight_lib ${KS_LIB_PARTS})
set_target_properties(kernelsight_lib PROPERTIES OUTPUT_NAME kernelsight LINKER_LANGUAGE CXX)
target_link_libraries(kernelsight_lib PUBLIC PkgConfig::SystemC yaml-cpp nlohmann_json::nlohmann_json Threads::Threads)
target_include_directories(kernelsight_lib INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/kernelsight>)
target_compile_definitions(kernelsight_lib INTERFACE SC_INCLUDE_DYNAMIC_PROCESSES)
target_compile_features(kernelsight_lib INTERFACE cxx_std_17)
if(KS_SANITIZE)
  # A sanitized library needs the sanitizer runtimes linked (first) into whatever uses it.
  target_link_options(kernelsight_lib INTERFACE -fsanitize=address,undefined)
endif()

install(TARGETS kernelsight_lib EXPORT KernelSightTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(dir base sc_modules kernels proto hw serving)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kernelsight
          FILES_MATCHING PATTERN "*.hpp")
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kernelsight/data)
install(EXPORT KernelSightTargets NAMESPACE KernelSight:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/KernelSight)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/KernelSightConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/KernelSightConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/KernelSight
  PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/KernelSightConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/KernelSightConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/KernelSightConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/KernelSight)
