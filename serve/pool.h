#ifndef K3_SERVE_POOL_H
#define K3_SERVE_POOL_H

/* The hybrid paged pool of one attention DP group (the seed study, section 12): one allocator,
 * one reference count and one LRU eviction policy over two payloads that keep their shapes:
 *
 *   MLA pages    page_tokens tokens of every MLA layer's latent (and DSA index) cache; a
 *                request's context takes ceil(tokens / page_tokens) of them, growing per token;
 *   KDA blocks   one KDA cache group's recurrent + ShortConv state of one request (the KDA layers
 *                split in kda_groups groups): a request's working state is kda_groups of them,
 *                fixed in size; a checkpoint is a copy of every group's state at one hash
 *                endpoint, kda_groups blocks that live and die together (siblings).
 *
 * Prefixes are matched by hash endpoints every hash_tokens tokens, finer than pages: block i's
 * chained hash names the tokens [0, (i+1) hash_tokens). An endpoint is reusable when the page
 * holding its tokens and a checkpoint of every KDA group at it exist; a lookup returns the
 * longest reusable endpoint (a model without KDA layers needs only the pages). Rules:
 *   - a hit pins every page up to the match and the checkpoint until the request is done with it;
 *   - a page or checkpoint being filled (a prefetch in flight) is not matched until it is done;
 *   - evicting one group's checkpoint invalidates its siblings (a partial checkpoint is useless);
 *   - with a CPU tier, what HBM evicts is written back (a page with the checkpoints at its
 *     endpoints, as a unit), and a hit in CPU DRAM is prefetched before the request runs;
 *   - the physical page a matched range lives in is the page of the last matched endpoint in it
 *     (it holds the range from its start); a match ending inside a page copies that page's
 *     prefix into the request's own page.
 * Sizes are bytes per GPU of the group. Bounded: blocks, entries and CPU objects grow in arrays
 * whose length the capacities bound (and SERVE_POOL_MAX_* beyond that); nothing prints. */

#include <stdbool.h>
#include <stdint.h>

#include "serve/serve.h"

enum { SERVE_POOL_MAX_BLOCKS = 1 << 22, SERVE_POOL_MAX_ENTRIES = 1 << 24 };

struct serve_pool_cfg {
	int64_t capacity_bytes;   /* HBM the pool may use */
	int64_t cpu_bytes;        /* the CPU DRAM tier (0: none) */
	int64_t hash_tokens, page_tokens;
	int64_t token_bytes;      /* MLA (+ DSA index) cache of one token, all layers */
	int kda_groups;           /* 0: no KDA layers (no state, no checkpoints) */
	int64_t group_bytes;      /* one group's state of one request */
	bool prefix;              /* keep and match prefixes */
};

struct serve_pool_block;
struct serve_pool_entry;
struct serve_pool_cpu;

struct serve_pool_stats {
	int64_t used_bytes, peak_bytes;        /* HBM */
	int64_t cpu_used_bytes, cpu_peak_bytes;
	int64_t ckpt_bytes, ckpt_peak_bytes;   /* checkpoints resident in HBM */
	int64_t ckpt_written_bytes;            /* checkpoints taken */
	int64_t ckpt_invalidated;              /* sibling blocks dropped with an evicted one */
	int64_t offload_bytes, prefetch_bytes; /* over the host link */
	int64_t evicted_pages, evicted_ckpts;
	int64_t lookups, hits, hit_tokens;
};

struct serve_pool {
	struct serve_pool_cfg cfg;
	int64_t page_bytes, state_bytes; /* a page; a request's working state (all groups) */
	struct serve_pool_block *blk;
	int32_t n_blk, cap_blk, free_blk;
	struct serve_pool_entry *ent;
	int32_t n_ent, cap_ent, free_ent;
	uint64_t *tab_key;               /* open addressing: chained hash -> entry */
	int32_t *tab_val;
	int64_t tab_cap;                 /* a power of two */
	int64_t tab_used;
	int32_t lru_head, lru_tail;      /* unpinned cached blocks, least recently used first */
	int64_t lru_bytes;               /* their bytes */
	int64_t pending_offload;         /* written back, not yet taken by the engine */
	int32_t *walk_range;             /* lookup scratch: per page range, the entry holding it */
	int64_t walk_cap;
	struct serve_pool_cpu *cpu;
	int32_t n_cpu, cap_cpu, free_cpu;
	int32_t cpu_head, cpu_tail;
	struct serve_pool_stats st;
};

/* A request's hold on the pool. Zero-initialized; serve_pool_release gives everything back. */
struct serve_pool_seq {
	int32_t *pages;          /* one block per page_tokens range of its context, in order */
	int32_t n_pages, cap_pages;
	int32_t state;           /* its working KDA state (-1: none) */
	int32_t pin_ckpt;        /* the entry whose checkpoint it restores from (-1: none) */
	bool busy;               /* some of its pages are being prefetched */
	int64_t registered;      /* endpoints it registered or matched */
	uint64_t chain;          /* chained hash through `registered` blocks */
	bool busy_ckpt;          /* its matched checkpoint is being prefetched */
};

/* What a lookup found. */
struct serve_pool_match {
	int64_t tokens;          /* reusable prefix, a multiple of hash_tokens (0: none) */
	int64_t endpoint;        /* tokens / hash_tokens - 1 */
	int64_t cpu_bytes;       /* to prefetch from CPU DRAM before use */
	int64_t copy_bytes;      /* HBM copies at admission: the partial page and the checkpoint */
	bool cpu;                /* part of it is in CPU DRAM */
};

/* The content ids of a request's blocks (serve_request's rule). */
uint64_t serve_block_id(const struct serve_request *q, int64_t block, int64_t hash_tokens);

int serve_pool_init(struct serve_pool *p, const struct serve_pool_cfg *cfg, struct err *e);
void serve_pool_free(struct serve_pool *p);

/* The longest reusable prefix of q's first `tokens` tokens (a request computes at least its last
 * prompt token, so callers pass prompt - 1). Nothing changes. */
void serve_pool_lookup(struct serve_pool *p, const struct serve_request *q, int64_t tokens,
		       struct serve_pool_match *out);

/* Bytes admitting a request of `tokens` context tokens (its working state and the pages of what
 * it computes beyond a match of `match_tokens`) takes at most. */
int64_t serve_pool_need(const struct serve_pool *p, int64_t tokens, int64_t match_tokens);

/* Bytes free now plus what eviction of unpinned cached blocks could free. */
int64_t serve_pool_available(const struct serve_pool *p);

/* Admits a request: pins the match (lookup again: it must be what `m` says), allocates its
 * working state and pages for `tokens` tokens of context, starts prefetches (the pages and
 * checkpoint coming from CPU DRAM are busy until serve_pool_prefetch_done). On failure (-ENOSPC)
 * nothing changed. */
int serve_pool_admit(struct serve_pool *p, struct serve_pool_seq *sq, const struct serve_request *q,
		     const struct serve_pool_match *m, int64_t tokens);
void serve_pool_prefetch_done(struct serve_pool *p, struct serve_pool_seq *sq);
/* The checkpoint was copied into the working state: unpin it. */
void serve_pool_restored(struct serve_pool *p, struct serve_pool_seq *sq);

/* Pages for `tokens` tokens of context (allocating, evicting unpinned cached blocks as needed);
 * -ENOSPC when even that does not make room (nothing changed). */
int serve_pool_grow(struct serve_pool *p, struct serve_pool_seq *sq, int64_t tokens);

/* Registers the endpoints of q's first `computed` tokens (they are done), taking a checkpoint at
 * those `ckpt_at` says (a function of the endpoint's token count, the engine's policy). Returns
 * the bytes written for checkpoints (state copies) this call. */
typedef bool (*serve_ckpt_fn)(const void *ctx, int64_t endpoint_tokens);
int64_t serve_pool_register(struct serve_pool *p, struct serve_pool_seq *sq, const struct serve_request *q,
			    int64_t computed, serve_ckpt_fn ckpt_at, const void *ctx);

/* Gives back everything the request holds; registered pages stay cached (evictable). */
void serve_pool_release(struct serve_pool *p, struct serve_pool_seq *sq);

/* Share of the HBM capacity in use (cached unpinned blocks included). */
double serve_pool_used_share(const struct serve_pool *p);
/* Pinned or owned by requests (what eviction cannot free). */
int64_t serve_pool_pinned_bytes(const struct serve_pool *p);

/* Bytes written back to CPU DRAM since the last call (the engine queues them on the host link). */
int64_t serve_pool_take_offload(struct serve_pool *p);

/* Internal consistency (for tests): every count and list agrees. Returns 0 or -EINVAL. */
int serve_pool_check(const struct serve_pool *p);

#endif
