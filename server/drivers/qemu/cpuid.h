/* The host CPU as the CPUID instruction describes it, as libvirtd reads
 * it: not /proc/cpuinfo's flags, which the kernel edits (bits it hides
 * for errata or boot parameters, flags of its own). */
#ifndef RV_QEMU_CPUID_H
#define RV_QEMU_CPUID_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rv_cpuid_host {
    char vendor[13];            /* leaf 0's string, "GenuineIntel", ... */
    unsigned family, model, stepping;   /* leaf 1's, as the SDM displays them */
} rv_cpuid_host;

/* The vendor and signature; false where there is no CPUID (not x86). */
bool rv_cpuid_host_read(rv_cpuid_host *out);

/* The features whose bits are set, in QEMU's spelling, into names
 * (static strings, at most max); their number.  0 where there is no
 * CPUID. */
size_t rv_cpuid_features(const char **names, size_t max);

/* Each (leaf, subleaf, register, bit) this reader knows, for the tests:
 * false past the last.  reg is 'a', 'b', 'c' or 'd'. */
bool rv_cpuid_table_entry(size_t i, const char **name, unsigned *leaf, unsigned *subleaf,
                          char *reg, unsigned *bit);

#endif
