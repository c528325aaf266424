/* The host CPU from the CPUID instruction (see cpuid.h).
 *
 * The table below is where each feature's bit is, from Intel's SDM
 * (vol. 2A, CPUID) and AMD's APM (vol. 3, appendix E), named as QEMU names
 * the feature (what a caller keeps is what the probe QEMU knows, so a
 * name this QEMU lacks is dropped there).  OS bits (osxsave) are left
 * out: they say what the kernel enabled, not what the CPU has. */
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HAVE_CPUID 1
#endif

#include "server/drivers/qemu/cpuid.h"

typedef struct feature_bit {
    unsigned leaf, subleaf;
    char reg;
    unsigned char bit;
    const char *name;
} feature_bit;

static const feature_bit table[] = {
    { 0x1, 0, 'd', 0, "fpu" }, { 0x1, 0, 'd', 1, "vme" }, { 0x1, 0, 'd', 2, "de" },
    { 0x1, 0, 'd', 3, "pse" }, { 0x1, 0, 'd', 4, "tsc" }, { 0x1, 0, 'd', 5, "msr" },
    { 0x1, 0, 'd', 6, "pae" }, { 0x1, 0, 'd', 7, "mce" }, { 0x1, 0, 'd', 8, "cx8" },
    { 0x1, 0, 'd', 9, "apic" }, { 0x1, 0, 'd', 11, "sep" }, { 0x1, 0, 'd', 12, "mtrr" },
    { 0x1, 0, 'd', 13, "pge" }, { 0x1, 0, 'd', 14, "mca" }, { 0x1, 0, 'd', 15, "cmov" },
    { 0x1, 0, 'd', 16, "pat" }, { 0x1, 0, 'd', 17, "pse36" }, { 0x1, 0, 'd', 18, "pn" },
    { 0x1, 0, 'd', 19, "clflush" }, { 0x1, 0, 'd', 21, "ds" }, { 0x1, 0, 'd', 22, "acpi" },
    { 0x1, 0, 'd', 23, "mmx" }, { 0x1, 0, 'd', 24, "fxsr" }, { 0x1, 0, 'd', 25, "sse" },
    { 0x1, 0, 'd', 26, "sse2" }, { 0x1, 0, 'd', 27, "ss" }, { 0x1, 0, 'd', 28, "ht" },
    { 0x1, 0, 'd', 29, "tm" }, { 0x1, 0, 'd', 30, "ia64" }, { 0x1, 0, 'd', 31, "pbe" },

    { 0x1, 0, 'c', 0, "pni" }, { 0x1, 0, 'c', 1, "pclmulqdq" }, { 0x1, 0, 'c', 2, "dtes64" },
    { 0x1, 0, 'c', 3, "monitor" }, { 0x1, 0, 'c', 4, "ds-cpl" }, { 0x1, 0, 'c', 5, "vmx" },
    { 0x1, 0, 'c', 6, "smx" }, { 0x1, 0, 'c', 7, "est" }, { 0x1, 0, 'c', 8, "tm2" },
    { 0x1, 0, 'c', 9, "ssse3" }, { 0x1, 0, 'c', 10, "cid" }, { 0x1, 0, 'c', 12, "fma" },
    { 0x1, 0, 'c', 13, "cx16" }, { 0x1, 0, 'c', 14, "xtpr" }, { 0x1, 0, 'c', 15, "pdcm" },
    { 0x1, 0, 'c', 17, "pcid" }, { 0x1, 0, 'c', 18, "dca" }, { 0x1, 0, 'c', 19, "sse4.1" },
    { 0x1, 0, 'c', 20, "sse4.2" }, { 0x1, 0, 'c', 21, "x2apic" }, { 0x1, 0, 'c', 22, "movbe" },
    { 0x1, 0, 'c', 23, "popcnt" }, { 0x1, 0, 'c', 24, "tsc-deadline" },
    { 0x1, 0, 'c', 25, "aes" }, { 0x1, 0, 'c', 26, "xsave" }, { 0x1, 0, 'c', 28, "avx" },
    { 0x1, 0, 'c', 29, "f16c" }, { 0x1, 0, 'c', 30, "rdrand" },
    { 0x1, 0, 'c', 31, "hypervisor" },

    { 0x6, 0, 'a', 2, "arat" },

    { 0x7, 0, 'b', 0, "fsgsbase" }, { 0x7, 0, 'b', 1, "tsc-adjust" }, { 0x7, 0, 'b', 2, "sgx" },
    { 0x7, 0, 'b', 3, "bmi1" }, { 0x7, 0, 'b', 4, "hle" }, { 0x7, 0, 'b', 5, "avx2" },
    { 0x7, 0, 'b', 7, "smep" }, { 0x7, 0, 'b', 8, "bmi2" }, { 0x7, 0, 'b', 9, "erms" },
    { 0x7, 0, 'b', 10, "invpcid" }, { 0x7, 0, 'b', 11, "rtm" }, { 0x7, 0, 'b', 14, "mpx" },
    { 0x7, 0, 'b', 16, "avx512f" }, { 0x7, 0, 'b', 17, "avx512dq" },
    { 0x7, 0, 'b', 18, "rdseed" }, { 0x7, 0, 'b', 19, "adx" }, { 0x7, 0, 'b', 20, "smap" },
    { 0x7, 0, 'b', 21, "avx512ifma" }, { 0x7, 0, 'b', 22, "pcommit" },
    { 0x7, 0, 'b', 23, "clflushopt" }, { 0x7, 0, 'b', 24, "clwb" },
    { 0x7, 0, 'b', 25, "intel-pt" }, { 0x7, 0, 'b', 26, "avx512pf" },
    { 0x7, 0, 'b', 27, "avx512er" }, { 0x7, 0, 'b', 28, "avx512cd" },
    { 0x7, 0, 'b', 29, "sha-ni" }, { 0x7, 0, 'b', 30, "avx512bw" },
    { 0x7, 0, 'b', 31, "avx512vl" },

    { 0x7, 0, 'c', 1, "avx512vbmi" }, { 0x7, 0, 'c', 2, "umip" }, { 0x7, 0, 'c', 3, "pku" },
    { 0x7, 0, 'c', 4, "ospke" }, { 0x7, 0, 'c', 5, "waitpkg" },
    { 0x7, 0, 'c', 6, "avx512vbmi2" }, { 0x7, 0, 'c', 8, "gfni" }, { 0x7, 0, 'c', 9, "vaes" },
    { 0x7, 0, 'c', 10, "vpclmulqdq" }, { 0x7, 0, 'c', 11, "avx512vnni" },
    { 0x7, 0, 'c', 12, "avx512bitalg" }, { 0x7, 0, 'c', 14, "avx512-vpopcntdq" },
    { 0x7, 0, 'c', 16, "la57" }, { 0x7, 0, 'c', 22, "rdpid" },
    { 0x7, 0, 'c', 24, "bus-lock-detect" }, { 0x7, 0, 'c', 25, "cldemote" },
    { 0x7, 0, 'c', 27, "movdiri" }, { 0x7, 0, 'c', 28, "movdir64b" },
    { 0x7, 0, 'c', 30, "sgxlc" }, { 0x7, 0, 'c', 31, "pks" },

    { 0x7, 0, 'd', 2, "avx512-4vnniw" }, { 0x7, 0, 'd', 3, "avx512-4fmaps" },
    { 0x7, 0, 'd', 4, "fsrm" }, { 0x7, 0, 'd', 8, "avx512-vp2intersect" },
    { 0x7, 0, 'd', 10, "md-clear" }, { 0x7, 0, 'd', 14, "serialize" },
    { 0x7, 0, 'd', 16, "tsx-ldtrk" }, { 0x7, 0, 'd', 19, "arch-lbr" },
    { 0x7, 0, 'd', 22, "amx-bf16" }, { 0x7, 0, 'd', 23, "avx512-fp16" },
    { 0x7, 0, 'd', 24, "amx-tile" }, { 0x7, 0, 'd', 25, "amx-int8" },
    { 0x7, 0, 'd', 26, "spec-ctrl" }, { 0x7, 0, 'd', 27, "stibp" },
    { 0x7, 0, 'd', 29, "arch-capabilities" }, { 0x7, 0, 'd', 30, "core-capability" },
    { 0x7, 0, 'd', 31, "ssbd" },

    { 0x7, 1, 'a', 4, "avx-vnni" }, { 0x7, 1, 'a', 5, "avx512-bf16" },
    { 0x7, 1, 'a', 7, "cmpccxadd" }, { 0x7, 1, 'a', 10, "fzrm" }, { 0x7, 1, 'a', 11, "fsrs" },
    { 0x7, 1, 'a', 12, "fsrc" }, { 0x7, 1, 'a', 21, "amx-fp16" },
    { 0x7, 1, 'a', 23, "avx-ifma" },
    { 0x7, 1, 'd', 4, "avx-vnni-int8" }, { 0x7, 1, 'd', 5, "avx-ne-convert" },
    { 0x7, 1, 'd', 14, "prefetchiti" },

    { 0xd, 1, 'a', 0, "xsaveopt" }, { 0xd, 1, 'a', 1, "xsavec" },
    { 0xd, 1, 'a', 2, "xgetbv1" }, { 0xd, 1, 'a', 3, "xsaves" }, { 0xd, 1, 'a', 4, "xfd" },

    /* SGX's leaf: what it can do, then the enclave attributes it allows. */
    { 0x12, 0, 'a', 0, "sgx1" }, { 0x12, 0, 'a', 1, "sgx2" }, { 0x12, 0, 'b', 0, "sgx-exinfo" },
    { 0x12, 1, 'a', 1, "sgx-debug" }, { 0x12, 1, 'a', 2, "sgx-mode64" },
    { 0x12, 1, 'a', 4, "sgx-provisionkey" }, { 0x12, 1, 'a', 5, "sgx-tokenkey" },
    { 0x12, 1, 'a', 7, "sgx-kss" },

    { 0x14, 0, 'c', 31, "intel-pt-lip" },

    /* AMD's copies of leaf 1's EDX bits in 0x80000001 are not features of
     * their own (QEMU and libvirt name them once). */
    { 0x80000001, 0, 'd', 11, "syscall" }, { 0x80000001, 0, 'd', 20, "nx" },
    { 0x80000001, 0, 'd', 22, "mmxext" }, { 0x80000001, 0, 'd', 25, "fxsr-opt" },
    { 0x80000001, 0, 'd', 26, "pdpe1gb" }, { 0x80000001, 0, 'd', 27, "rdtscp" },
    { 0x80000001, 0, 'd', 29, "lm" }, { 0x80000001, 0, 'd', 30, "3dnowext" },
    { 0x80000001, 0, 'd', 31, "3dnow" },

    { 0x80000001, 0, 'c', 0, "lahf-lm" }, { 0x80000001, 0, 'c', 1, "cmp-legacy" },
    { 0x80000001, 0, 'c', 2, "svm" }, { 0x80000001, 0, 'c', 3, "extapic" },
    { 0x80000001, 0, 'c', 4, "cr8legacy" }, { 0x80000001, 0, 'c', 5, "abm" },
    { 0x80000001, 0, 'c', 6, "sse4a" }, { 0x80000001, 0, 'c', 7, "misalignsse" },
    { 0x80000001, 0, 'c', 8, "3dnowprefetch" }, { 0x80000001, 0, 'c', 9, "osvw" },
    { 0x80000001, 0, 'c', 10, "ibs" }, { 0x80000001, 0, 'c', 11, "xop" },
    { 0x80000001, 0, 'c', 12, "skinit" }, { 0x80000001, 0, 'c', 13, "wdt" },
    { 0x80000001, 0, 'c', 15, "lwp" }, { 0x80000001, 0, 'c', 16, "fma4" },
    { 0x80000001, 0, 'c', 17, "tce" }, { 0x80000001, 0, 'c', 19, "nodeid-msr" },
    { 0x80000001, 0, 'c', 21, "tbm" }, { 0x80000001, 0, 'c', 22, "topoext" },
    { 0x80000001, 0, 'c', 23, "perfctr-core" }, { 0x80000001, 0, 'c', 24, "perfctr-nb" },

    { 0x80000007, 0, 'd', 8, "invtsc" },

    { 0x80000008, 0, 'b', 0, "clzero" }, { 0x80000008, 0, 'b', 2, "xsaveerptr" },
    { 0x80000008, 0, 'b', 9, "wbnoinvd" }, { 0x80000008, 0, 'b', 12, "ibpb" },
    { 0x80000008, 0, 'b', 14, "ibrs" }, { 0x80000008, 0, 'b', 15, "amd-stibp" },
    { 0x80000008, 0, 'b', 17, "stibp-always-on" }, { 0x80000008, 0, 'b', 24, "amd-ssbd" },
    { 0x80000008, 0, 'b', 25, "virt-ssbd" }, { 0x80000008, 0, 'b', 26, "amd-no-ssb" },
    { 0x80000008, 0, 'b', 28, "amd-psfd" },

    { 0x8000000a, 0, 'd', 0, "npt" }, { 0x8000000a, 0, 'd', 1, "lbrv" },
    { 0x8000000a, 0, 'd', 2, "svm-lock" }, { 0x8000000a, 0, 'd', 3, "nrip-save" },
    { 0x8000000a, 0, 'd', 4, "tsc-scale" }, { 0x8000000a, 0, 'd', 5, "vmcb-clean" },
    { 0x8000000a, 0, 'd', 6, "flushbyasid" }, { 0x8000000a, 0, 'd', 7, "decodeassists" },
    { 0x8000000a, 0, 'd', 10, "pause-filter" }, { 0x8000000a, 0, 'd', 12, "pfthreshold" },
    { 0x8000000a, 0, 'd', 13, "avic" }, { 0x8000000a, 0, 'd', 15, "v-vmsave-vmload" },
    { 0x8000000a, 0, 'd', 16, "vgif" }, { 0x8000000a, 0, 'd', 28, "svme-addr-chk" },

    { 0x80000021, 0, 'a', 0, "no-nested-data-bp" },
    { 0x80000021, 0, 'a', 2, "lfence-always-serializing" },
    { 0x80000021, 0, 'a', 6, "null-sel-clr-base" }, { 0x80000021, 0, 'a', 8, "auto-ibrs" },

    /* VIA/Zhaoxin's PadLock leaf, read only on their CPUs. */
    { 0xc0000001, 0, 'd', 2, "xstore" }, { 0xc0000001, 0, 'd', 3, "xstore-en" },
    { 0xc0000001, 0, 'd', 6, "xcrypt" }, { 0xc0000001, 0, 'd', 7, "xcrypt-en" },
    { 0xc0000001, 0, 'd', 8, "ace2" }, { 0xc0000001, 0, 'd', 9, "ace2-en" },
    { 0xc0000001, 0, 'd', 10, "phe" }, { 0xc0000001, 0, 'd', 11, "phe-en" },
    { 0xc0000001, 0, 'd', 12, "pmm" }, { 0xc0000001, 0, 'd', 13, "pmm-en" },
};

#define NTABLE (sizeof(table) / sizeof(table[0]))

bool rv_cpuid_table_entry(size_t i, const char **name, unsigned *leaf, unsigned *subleaf,
                          char *reg, unsigned *bit)
{
    if (i >= NTABLE)
        return false;
    *name = table[i].name;
    *leaf = table[i].leaf;
    *subleaf = table[i].subleaf;
    *reg = table[i].reg;
    *bit = table[i].bit;
    return true;
}

#ifdef HAVE_CPUID

static void vendor_of(char out[13])
{
    unsigned a, b, c, d;
    __cpuid(0, a, b, c, d);
    memcpy(out, &b, 4);
    memcpy(out + 4, &d, 4);
    memcpy(out + 8, &c, 4);
    out[12] = '\0';
}

/* The highest leaf of leaf's range (0, 0x80000000, 0xc0000000); 0 when
 * the range is not there.  A leaf past the highest is not read: Intel
 * answers it with the highest basic leaf's values. */
static unsigned max_leaf(unsigned range)
{
    unsigned a, b, c, d;
    if (range == 0xc0000000) {
        char v[13];
        vendor_of(v);
        if (strcmp(v, "CentaurHauls") != 0 && strcmp(v, "  Shanghai  ") != 0)
            return 0;
    }
    __cpuid(range, a, b, c, d);
    return range && (a & 0xffff0000u) != range ? 0 : a;
}

bool rv_cpuid_host_read(rv_cpuid_host *out)
{
    unsigned a, b, c, d;
    vendor_of(out->vendor);
    __cpuid(1, a, b, c, d);
    unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
    out->family = family == 0xf ? family + ((a >> 20) & 0xff) : family;
    out->model = family == 0x6 || family == 0xf ? model + ((a >> 12) & 0xf0) : model;
    out->stepping = a & 0xf;
    return true;
}

size_t rv_cpuid_features(const char **names, size_t max)
{
    unsigned maxes[3] = { max_leaf(0), max_leaf(0x80000000), max_leaf(0xc0000000) };
    unsigned leaf = ~0u, subleaf = 0, regs[4] = { 0 }, max7 = 0;
    size_t n = 0;
    if (maxes[0] >= 7) {
        unsigned b, c, d;
        __cpuid_count(7, 0, max7, b, c, d);
    }
    for (size_t i = 0; i < NTABLE && n < max; i++) {
        const feature_bit *f = &table[i];
        unsigned top = maxes[f->leaf >= 0xc0000000 ? 2 : f->leaf >= 0x80000000 ? 1 : 0];
        if (f->leaf > top || (f->leaf == 7 && f->subleaf > max7))
            continue;
        if (f->leaf != leaf || f->subleaf != subleaf) {    /* the table is in leaf order */
            leaf = f->leaf;
            subleaf = f->subleaf;
            __cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
        }
        if (regs[f->reg - 'a'] >> f->bit & 1)
            names[n++] = f->name;
    }
    return n;
}

#else

bool rv_cpuid_host_read(rv_cpuid_host *out)
{
    (void)out;
    return false;
}

size_t rv_cpuid_features(const char **names, size_t max)
{
    (void)names, (void)max;
    return 0;
}

#endif
