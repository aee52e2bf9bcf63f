# The Python package's extension module (python/) needs Python's headers and nanobind.
# OVERLAP_BUILD_PYTHON: AUTO (the default) builds it where both are found, so a GPU machine
# without them still builds everything else; ON builds it or stops saying what is missing
# (tools/build.sh and `pip install .` ask for ON); OFF never builds it.
set(OVERLAP_BUILD_PYTHON AUTO CACHE STRING "Build the Python extension module: AUTO, ON or OFF")
set_property(CACHE OVERLAP_BUILD_PYTHON PROPERTY STRINGS AUTO ON OFF)

set(OVERLAP_HAVE_PYTHON OFF)
if(OVERLAP_BUILD_PYTHON STREQUAL "AUTO")
  set(overlap_python_required "")
elseif(OVERLAP_BUILD_PYTHON)
  set(overlap_python_required REQUIRED)
else()
  return()
endif()

find_package(Python 3.9 COMPONENTS Interpreter Development.Module ${overlap_python_required})
if(Python_FOUND)
  # nanobind ships its CMake package inside the Python package (pip install nanobind).
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                  OUTPUT_VARIABLE nanobind_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT nanobind_ROOT AND overlap_python_required)
    message(FATAL_ERROR "overlap: OVERLAP_BUILD_PYTHON=ON but ${Python_EXECUTABLE} has no nanobind; "
                        "run tools/install_deps.sh (or pip install nanobind), or -DOVERLAP_BUILD_PYTHON=OFF")
  endif()
  if(nanobind_ROOT)
    find_package(nanobind CONFIG ${overlap_python_required})
    set(OVERLAP_HAVE_PYTHON ${nanobind_FOUND})
  endif()
endif()
if(OVERLAP_HAVE_PYTHON)
  message(STATUS "overlap: Python package enabled (${Python_EXECUTABLE}, nanobind ${nanobind_VERSION})")
else()
  message(STATUS "overlap: no Python headers or nanobind found; not building the Python package")
endif()
