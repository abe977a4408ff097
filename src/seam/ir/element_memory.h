// Memory for array elements. Blocks of 32 MiB or more, which the C library
// maps afresh for each allocation, are aligned to 2 MiB and advised to the
// kernel as huge pages, so a fresh buffer takes one page fault per 2 MiB
// instead of one per 4 KiB. Such blocks, once freed, are kept for the next
// allocation of the same size: a block the kernel maps afresh is zeroed
// page by page on first touch, which costs what writing it once more does
// (a module called again and again, a training step, gets last call's
// results' memory back instead). What is kept stays under a bound, and is
// given back to the system when an allocation would fail.
#pragma once

#include <cstddef>

namespace seam {

// `bytes` of memory, not initialized; throws std::bad_alloc when there is
// none.
void* AllocateElements(size_t bytes);
// Frees what AllocateElements(bytes) returned.
void FreeElements(void* memory, size_t bytes) noexcept;

// Gives every kept block back to the system; returns the bytes freed.
size_t ReleaseKeptElements() noexcept;

}  // namespace seam
