/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vmalloc's call sites where no argument gives one: vfree() and
 * vfree_atomic() (fentry), and the vmap_area tracepoints that stand in
 * for the fexit of __vmalloc_node_range() where fentry cannot attach.
 * A short kernel stack is walked past the vmalloc API's own text (the
 * ranges user space found in kallsyms, vmcallers.c): the first frame
 * after it is the call site, the return address into the function that
 * called vmalloc, vzalloc, kvmalloc, vfree, kvfree ..., as the caller
 * argument of __vmalloc_node_range() is.  From fentry the traced function
 * shows in the stack as the trampoline's return address into it.
 *
 * #included by kmemsnoop.bpf.c.
 */
#ifndef KMEMSNOOP_VMALLOC_BPF_H
#define KMEMSNOOP_VMALLOC_BPF_H

const volatile struct kmt_text_range vm_internal[KMT_VM_RANGES] = {};
const volatile __u32 vm_internal_n = 0;

/*
 * A global function: the verifier checks it once, on its own, where an
 * inlined copy was checked again for every frame of vm_call_site()'s loop
 * and every way through it (over 460,000 instructions for a vfree program,
 * seconds of start-up on a slow machine, half the verifier's limit).
 */
__noinline int vm_is_internal(__u64 ip)
{
	for (__u32 i = 0; i < KMT_VM_RANGES; i++) {
		if (i >= vm_internal_n)
			return 0;
		if (ip >= vm_internal[i].start && ip < vm_internal[i].end)
			return 1;
	}
	return 0;
}

/* The first frame after the vmalloc API's, or 0 if the stack has none. */
static __always_inline __u64 vm_call_site(void *ctx)
{
	__u64 ips[KMT_VM_FRAMES];
	bool inside = false;
	long n = bpf_get_stack(ctx, ips, sizeof(ips), 0);

	if (n <= 0)
		return 0;
	for (int i = 0; i < KMT_VM_FRAMES; i++) {
		bool internal;

		if (i >= n / 8)
			break;
		internal = vm_is_internal(ips[i]);
		if (internal)
			inside = true;
		else if (inside)
			return ips[i];
	}
	return 0;
}

#endif /* KMEMSNOOP_VMALLOC_BPF_H */
