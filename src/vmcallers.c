// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The vmalloc API's text: see vmcallers.h. */
#include <string.h>

#include "vmcallers.h"

/* Names without the _noprof of 6.10+ and compiler clone suffixes. */
static const char *const api[] = {
	/* allocation */
	"vmalloc", "vzalloc", "__vmalloc", "vmalloc_user", "vmalloc_32", "vmalloc_32_user",
	"vmalloc_node", "vzalloc_node", "vmalloc_huge", "vmalloc_huge_node", "__vmalloc_node",
	"__vmalloc_node_range", "__vmalloc_area_node", "vm_area_alloc_pages", "__vmalloc_array",
	"vmalloc_array", "kvmalloc_node", "__kvmalloc_node", "kvrealloc", "kvrealloc_node_align",
	"__get_vm_area_node", "__get_vm_area_caller", "get_vm_area", "get_vm_area_caller",
	"alloc_vmap_area",
	/* free */
	"vfree", "vfree_atomic", "__vfree", "__vfree_deferred", "__vunmap", "kvfree",
	"kvfree_sensitive", "remove_vm_area", "free_vmap_area_noflush",
};

bool vmcallers_is_api(const char *name)
{
	size_t n = strcspn(name, ".");
	static const char noprof[] = "_noprof";

	if (n > sizeof(noprof) - 1 && !strncmp(name + n - (sizeof(noprof) - 1), noprof,
					       sizeof(noprof) - 1))
		n -= sizeof(noprof) - 1;
	for (size_t i = 0; i < sizeof(api) / sizeof(api[0]); i++)
		if (strlen(api[i]) == n && !strncmp(name, api[i], n))
			return true;
	return false;
}
