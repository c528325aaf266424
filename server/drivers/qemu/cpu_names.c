#include <string.h>

#include "server/drivers/qemu/cpu_names.h"

/* Where libvirt's name is not QEMU's: {QEMU's, libvirt's}.  (The SVM
 * features, svm-lock, nrip-save, ..., libvirt spells as QEMU does now.) */
static const char *const libvirt_names[][2] = {
    { "pclmulqdq", "pclmuldq" }, { "lahf-lm", "lahf_lm" }, { "cmp-legacy", "cmp_legacy" },
    { "fxsr-opt", "fxsr_opt" }, { "tsc-adjust", "tsc_adjust" }, { "ds-cpl", "ds_cpl" },
    { "nodeid-msr", "nodeid_msr" }, { "perfctr-core", "perfctr_core" },
    { "perfctr-nb", "perfctr_nb" }, { "kvm-pv-eoi", "kvm_pv_eoi" },
    { "kvm-pv-unhalt", "kvm_pv_unhalt" }, { "kvm-asyncpf", "kvm_asyncpf" },
    { "kvm-steal-time", "kvm_steal_time" }, { "kvm-nopiodelay", "kvm_nopiodelay" },
    { "kvm-mmu", "kvm_mmu" }, { "kvmclock-stable-bit", "kvmclock_stable_bit" },
};

#define NNAMES (sizeof(libvirt_names) / sizeof(libvirt_names[0]))

const char *rv_cpu_qemu_name(const char *name)
{
    for (size_t i = 0; i < NNAMES; i++)
        if (strcmp(libvirt_names[i][1], name) == 0)
            return libvirt_names[i][0];
    return name;
}

const char *rv_cpu_libvirt_name(const char *qemu)
{
    for (size_t i = 0; i < NNAMES; i++)
        if (strcmp(libvirt_names[i][0], qemu) == 0)
            return libvirt_names[i][1];
    return qemu;
}
