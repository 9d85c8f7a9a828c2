// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The vmalloc API's text: see vmcallers.h. */
#include <string.h>

#include "names.h"
#include "vmcallers.h"

/* Names without the _noprof of 6.10+ and compiler clone suffixes. */
static const struct name api[] = {
	/* allocation */
	NAME("vmalloc"), NAME("vzalloc"), NAME("__vmalloc"), NAME("vmalloc_user"),
	NAME("vmalloc_32"), NAME("vmalloc_32_user"), NAME("vmalloc_node"), NAME("vzalloc_node"),
	NAME("vmalloc_huge"), NAME("vmalloc_huge_node"), NAME("__vmalloc_node"),
	NAME("__vmalloc_node_range"), NAME("__vmalloc_area_node"), NAME("vm_area_alloc_pages"),
	NAME("__vmalloc_array"), NAME("vmalloc_array"), NAME("kvmalloc_node"),
	NAME("__kvmalloc_node"), NAME("kvrealloc"), NAME("kvrealloc_node_align"),
	NAME("__get_vm_area_node"), NAME("__get_vm_area_caller"), NAME("get_vm_area"),
	NAME("get_vm_area_caller"), NAME("alloc_vmap_area"),
	/* free */
	NAME("vfree"), NAME("vfree_atomic"), NAME("__vfree"), NAME("__vfree_deferred"),
	NAME("__vunmap"), NAME("kvfree"), NAME("kvfree_sensitive"), NAME("remove_vm_area"),
	NAME("free_vmap_area_noflush"),
};

bool vmcallers_is_api(const char *name)
{
	size_t n = strcspn(name, ".");
	static const char noprof[] = "_noprof";

	if (n > sizeof(noprof) - 1 && !strncmp(name + n - (sizeof(noprof) - 1), noprof,
					       sizeof(noprof) - 1))
		n -= sizeof(noprof) - 1;
	return names_equal(name, n, api, NAMES_COUNT(api));
}
