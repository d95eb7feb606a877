# One static library per src/<component>/ folder. Sources are listed by glob so
# that adding a file to a component needs no edit here; CONFIGURE_DEPENDS makes
# the build notice new files.
function(nxdns_component name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB _sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/*.c)
  if(NOT _sources)
    message(STATUS "nxdns: component '${name}' has no sources yet; skipped")
    return()
  endif()
  add_library(nxdns_${name} STATIC ${_sources})
  target_include_directories(nxdns_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(nxdns_${name} PUBLIC ${ARG_DEPS})
endfunction()
