# CUDA is optional at configure time, but wherever nvcc exists the kernels are compiled,
# so a machine without a GPU (CI) still catches CUDA compile errors.
set(OVERLAP_HAVE_CUDA OFF)
if(OVERLAP_ENABLE_CUDA)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  # CUTLASS / CuTe headers (header-only; tools/fetch_cutlass.sh puts them in .deps/).
  set(OVERLAP_CUTLASS_INCLUDE "${CMAKE_CURRENT_LIST_DIR}/../.deps/cutlass/include" CACHE PATH
      "CUTLASS include directory (holds cute/ and cutlass/)")
  set(overlap_use_nvcc ${CMAKE_CUDA_COMPILER})
  if(CMAKE_CUDA_COMPILER AND NOT EXISTS "${OVERLAP_CUTLASS_INCLUDE}/cute/tensor.hpp")
    if(NOT OVERLAP_CUDA_OPTIONAL)
      message(FATAL_ERROR "overlap: CUTLASS headers not found at ${OVERLAP_CUTLASS_INCLUDE}; "
                          "run tools/fetch_cutlass.sh (tools/install_deps.sh does)")
    endif()
    # `pip install .`: nvcc alone is not enough for the kernels; build the CPU package rather than fail.
    message(WARNING "overlap: nvcc found but no CUTLASS headers at ${OVERLAP_CUTLASS_INCLUDE} "
                    "(tools/fetch_cutlass.sh); building without the CUDA kernels")
    set(overlap_use_nvcc "")
  endif()
  if(overlap_use_nvcc)
    # Hopper kernels use wgmma / setmaxnreg, which need the arch-specific sm_90a target.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90a)
    endif()
    enable_language(CUDA)
    # CMake 3.25 knows no C++20 flag for nvcc 13; device code needs only C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(OVERLAP_HAVE_CUDA ON)
    if(NOT TARGET overlap_cutlass)
      add_library(overlap_cutlass INTERFACE)
      target_include_directories(overlap_cutlass SYSTEM INTERFACE "${OVERLAP_CUTLASS_INCLUDE}")
    endif()
    message(STATUS "overlap: CUDA kernels enabled (${CMAKE_CUDA_COMPILER}, arch ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "overlap: no CUDA kernels (no nvcc, or no CUTLASS headers); building CPU parts only")
  endif()
endif()
