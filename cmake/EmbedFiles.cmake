# nxdns_embed_files(TARGET OUTPUT <file.cpp> FILES <name>=<path> ...): turns
# files into byte arrays in one generated C++ source added to TARGET, read at
# run time through web/embedded_files.hpp. Used for the status page (HTML,
# CSS, script) and the OpenAPI document, so the daemon serves them without
# reading the file system and nothing is fetched from anywhere else. The
# source is regenerated whenever one of the files changes.
function(nxdns_embed_files target)
  cmake_parse_arguments(ARG "" "OUTPUT" "FILES" ${ARGN})
  set(_names "")
  set(_paths "")
  foreach(_pair IN LISTS ARG_FILES)
    string(FIND "${_pair}" "=" _eq)
    string(SUBSTRING "${_pair}" 0 ${_eq} _name)
    math(EXPR _from "${_eq} + 1")
    string(SUBSTRING "${_pair}" ${_from} -1 _path)
    list(APPEND _names "${_name}")
    list(APPEND _paths "${_path}")
  endforeach()
  string(REPLACE ";" "|" _names_arg "${_names}")
  string(REPLACE ";" "|" _paths_arg "${_paths}")
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} "-DNAMES=${_names_arg}" "-DPATHS=${_paths_arg}" -DOUTPUT=${ARG_OUTPUT} -P
            ${PROJECT_SOURCE_DIR}/cmake/embed_files_script.cmake
    DEPENDS ${_paths} ${PROJECT_SOURCE_DIR}/cmake/embed_files_script.cmake
    COMMENT "Embedding ${_names}"
    VERBATIM)
  target_sources(${target} PRIVATE ${ARG_OUTPUT})
endfunction()
