// Copying a plain array into a oneDNN blocked layout with one inner block
// (the weights layouts its direct convolutions pick, `Acdb32a` and the
// like) as runs of whole blocks. Where the plain array's innermost
// dimension is the blocked one, every block is a contiguous run of the
// source; oneDNN's generic reorder moves such weights element by element
// (resnet50's 4.7 MB halves of its late 3x3 weights: 0.6 ms a copy, a
// quarter of its library time in all).
#pragma once

#include <oneapi/dnnl/dnnl_types.h>

namespace seam::runtime {

// Whether CopyIntoBlocks copies arrays of layout `plain` into `blocked`:
// same type and dimensions, `plain` strided with the blocked dimension
// contiguous, `blocked` with that one inner block and no other padding.
bool CopiesIntoBlocks(const dnnl_memory_desc_t& plain, const dnnl_memory_desc_t& blocked);

// Copies `from` (layout `plain`) into `to` (layout `blocked`), the padding
// of the last block zero; on Seam's pool unless called inside a pool loop.
void CopyIntoBlocks(const dnnl_memory_desc_t& plain, const void* from,
                    const dnnl_memory_desc_t& blocked, void* to);

}  // namespace seam::runtime
