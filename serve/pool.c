/* The hybrid paged pool (serve/pool.h). */
#include "serve/pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "serve/rng.h"

enum { BLK_FREE, BLK_PAGE, BLK_STATE, BLK_CKPT };

struct serve_pool_block {
	int64_t bytes;
	int32_t ref;        /* pins: requests using it (a state block: its owner) */
	int32_t prev, next; /* LRU links; next: the free list */
	int32_t entry;      /* a checkpoint block: its entry */
	int16_t n_ents;     /* a page: entries whose range it holds */
	uint8_t kind;
	bool in_lru, busy;
	int8_t group;
	int32_t ents[SERVE_MAX_PAGE_ENDPOINTS];
};

struct serve_pool_entry {
	uint64_t hash;
	int32_t page;       /* HBM page holding its tokens (-1) */
	int32_t cpu_page;   /* CPU DRAM copy of that page (-1) */
	int32_t ckpt[SERVE_MAX_KDA_GROUPS]; /* HBM checkpoint blocks (-1) */
	int32_t cpu_ckpt;   /* CPU DRAM checkpoint (-1) */
	int32_t next_free;
	bool live;
};

enum { CPU_PAGE, CPU_CKPT };

struct serve_pool_cpu {
	int64_t bytes;
	int32_t prev, next;
	int32_t pins;       /* admissions bringing it back right now: not evicted */
	int32_t entry;      /* a checkpoint: its entry */
	int16_t n_ents;     /* a page: its entries */
	uint8_t kind;
	bool live;
	int32_t ents[SERVE_MAX_PAGE_ENDPOINTS];
};

uint64_t serve_block_id(const struct serve_request *q, int64_t block, int64_t hash_tokens)
{
	int64_t last = (block + 1) * hash_tokens - 1;
	int64_t j = last / SERVE_ID_TOKENS;
	if (j < q->n_ids)
		return q->ids[j];
	return last < q->seg_tokens ? q->seg_id[0] : serve_mix(q->seg_id[1], (uint64_t)block);
}

/* ---- hash table ---- */

static uint64_t key_of(uint64_t h)
{
	return h | 1; /* 0 marks an empty slot */
}

static int64_t tab_slot(const struct serve_pool *p, uint64_t key)
{
	uint64_t mask = (uint64_t)p->tab_cap - 1;
	uint64_t i = (key * UINT64_C(0x9e3779b97f4a7c15)) >> 20 & mask;
	while (p->tab_key[i] && p->tab_key[i] != key)
		i = (i + 1) & mask;
	return (int64_t)i;
}

static int32_t tab_find(const struct serve_pool *p, uint64_t h)
{
	int64_t i = tab_slot(p, key_of(h));
	return p->tab_key[i] ? p->tab_val[i] : -1;
}

static int tab_grow(struct serve_pool *p)
{
	int64_t nc = p->tab_cap ? p->tab_cap * 2 : 4096;
	uint64_t *ok = p->tab_key;
	int32_t *ov = p->tab_val;
	int64_t oc = p->tab_cap;
	uint64_t *nk = calloc((size_t)nc, sizeof *nk);
	int32_t *nv = malloc((size_t)nc * sizeof *nv);
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	p->tab_key = nk;
	p->tab_val = nv;
	p->tab_cap = nc;
	for (int64_t i = 0; i < oc; i++)
		if (ok[i]) {
			int64_t s = tab_slot(p, ok[i]);
			p->tab_key[s] = ok[i];
			p->tab_val[s] = ov[i];
		}
	free(ok);
	free(ov);
	return 0;
}

static int tab_insert(struct serve_pool *p, uint64_t h, int32_t v)
{
	if ((p->tab_used + 1) * 2 > p->tab_cap && tab_grow(p) < 0)
		return -ENOMEM;
	int64_t i = tab_slot(p, key_of(h));
	if (!p->tab_key[i])
		p->tab_used++;
	p->tab_key[i] = key_of(h);
	p->tab_val[i] = v;
	return 0;
}

/* Deletion by backward shift (linear probing keeps no tombstones). */
static void tab_delete(struct serve_pool *p, uint64_t h)
{
	uint64_t mask = (uint64_t)p->tab_cap - 1;
	int64_t i = tab_slot(p, key_of(h));
	if (!p->tab_key[i])
		return;
	p->tab_key[i] = 0;
	p->tab_used--;
	uint64_t j = (uint64_t)i;
	for (;;) {
		j = (j + 1) & mask;
		if (!p->tab_key[j])
			return;
		uint64_t home = (p->tab_key[j] * UINT64_C(0x9e3779b97f4a7c15)) >> 20 & mask;
		/* move j to the hole at i when its home is not in (i, j] (cyclically) */
		bool in = (uint64_t)i <= j ? (home > (uint64_t)i && home <= j) : (home > (uint64_t)i || home <= j);
		if (!in) {
			p->tab_key[i] = p->tab_key[j];
			p->tab_val[i] = p->tab_val[j];
			p->tab_key[j] = 0;
			i = (int64_t)j;
		}
	}
}

/* ---- blocks and the LRU ---- */

static void lru_remove(struct serve_pool *p, int32_t b)
{
	struct serve_pool_block *k = &p->blk[b];
	if (!k->in_lru)
		return;
	if (k->prev >= 0)
		p->blk[k->prev].next = k->next;
	else
		p->lru_head = k->next;
	if (k->next >= 0)
		p->blk[k->next].prev = k->prev;
	else
		p->lru_tail = k->prev;
	k->in_lru = false;
	k->prev = k->next = -1;
	p->lru_bytes -= k->bytes;
}

static void lru_push(struct serve_pool *p, int32_t b)
{
	struct serve_pool_block *k = &p->blk[b];
	if (k->in_lru)
		lru_remove(p, b);
	k->prev = p->lru_tail;
	k->next = -1;
	if (p->lru_tail >= 0)
		p->blk[p->lru_tail].next = b;
	else
		p->lru_head = b;
	p->lru_tail = b;
	k->in_lru = true;
	p->lru_bytes += k->bytes;
}

static void account(struct serve_pool *p, int64_t bytes, uint8_t kind)
{
	p->st.used_bytes += bytes;
	if (p->st.used_bytes > p->st.peak_bytes)
		p->st.peak_bytes = p->st.used_bytes;
	if (kind == BLK_CKPT) {
		p->st.ckpt_bytes += bytes;
		if (p->st.ckpt_bytes > p->st.ckpt_peak_bytes)
			p->st.ckpt_peak_bytes = p->st.ckpt_bytes;
	}
}

static void free_block(struct serve_pool *p, int32_t b)
{
	struct serve_pool_block *k = &p->blk[b];
	lru_remove(p, b);
	account(p, -k->bytes, k->kind);
	k->kind = BLK_FREE;
	k->ref = 0;
	k->n_ents = 0;
	k->busy = false;
	k->next = p->free_blk;
	p->free_blk = b;
}

/* ---- entries ---- */

static void entry_drop(struct serve_pool *p, int32_t ei);
static void cpu_free(struct serve_pool *p, int32_t o);

static int32_t entry_new(struct serve_pool *p, uint64_t h)
{
	int32_t ei;
	if (p->free_ent >= 0) {
		ei = p->free_ent;
		p->free_ent = p->ent[ei].next_free;
	} else {
		if (p->n_ent == p->cap_ent) {
			if (p->cap_ent >= SERVE_POOL_MAX_ENTRIES)
				return -1;
			int32_t nc = p->cap_ent ? p->cap_ent * 2 : 1024;
			struct serve_pool_entry *n = realloc(p->ent, (size_t)nc * sizeof *n);
			if (!n)
				return -1;
			p->ent = n;
			p->cap_ent = nc;
		}
		ei = p->n_ent++;
	}
	if (tab_insert(p, h, ei) < 0) {
		p->ent[ei].next_free = p->free_ent;
		p->ent[ei].live = false;
		p->free_ent = ei;
		return -1;
	}
	struct serve_pool_entry *e = &p->ent[ei];
	e->hash = h;
	e->page = e->cpu_page = e->cpu_ckpt = -1;
	for (int g = 0; g < SERVE_MAX_KDA_GROUPS; g++)
		e->ckpt[g] = -1;
	e->live = true;
	return ei;
}

static bool has_ckpt(const struct serve_pool *p, const struct serve_pool_entry *e)
{
	return p->cfg.kda_groups > 0 && e->ckpt[0] >= 0;
}

/* Frees the HBM checkpoint of entry ei (every group). */
static void ckpt_free(struct serve_pool *p, int32_t ei)
{
	struct serve_pool_entry *e = &p->ent[ei];
	for (int g = 0; g < p->cfg.kda_groups; g++)
		if (e->ckpt[g] >= 0) {
			free_block(p, e->ckpt[g]);
			e->ckpt[g] = -1;
		}
}

static void entry_remove_from_page(struct serve_pool *p, int32_t b, int32_t ei)
{
	struct serve_pool_block *k = &p->blk[b];
	for (int i = 0; i < k->n_ents; i++)
		if (k->ents[i] == ei) {
			k->ents[i] = k->ents[--k->n_ents];
			return;
		}
}

static void cpu_remove_entry(struct serve_pool *p, int32_t o, int32_t ei)
{
	struct serve_pool_cpu *c = &p->cpu[o];
	for (int i = 0; i < c->n_ents; i++)
		if (c->ents[i] == ei) {
			c->ents[i] = c->ents[--c->n_ents];
			break;
		}
	if (c->n_ents == 0)
		cpu_free(p, o);
}

/* An entry with neither an HBM nor a CPU page is useless: gone, with its checkpoints. */
static void entry_drop(struct serve_pool *p, int32_t ei)
{
	struct serve_pool_entry *e = &p->ent[ei];
	if (!e->live)
		return;
	ckpt_free(p, ei);
	if (e->cpu_ckpt >= 0) {
		int32_t o = e->cpu_ckpt;
		e->cpu_ckpt = -1;
		cpu_free(p, o);
	}
	if (e->page >= 0)
		entry_remove_from_page(p, e->page, ei);
	if (e->cpu_page >= 0) {
		int32_t o = e->cpu_page;
		e->cpu_page = -1;
		cpu_remove_entry(p, o, ei);
	}
	tab_delete(p, e->hash);
	e->live = false;
	e->next_free = p->free_ent;
	p->free_ent = ei;
}

/* ---- the CPU tier ---- */

static void cpu_unlink(struct serve_pool *p, int32_t o)
{
	struct serve_pool_cpu *c = &p->cpu[o];
	if (c->prev >= 0)
		p->cpu[c->prev].next = c->next;
	else
		p->cpu_head = c->next;
	if (c->next >= 0)
		p->cpu[c->next].prev = c->prev;
	else
		p->cpu_tail = c->prev;
	c->prev = c->next = -1;
}

static void cpu_touch(struct serve_pool *p, int32_t o)
{
	cpu_unlink(p, o);
	struct serve_pool_cpu *c = &p->cpu[o];
	c->prev = p->cpu_tail;
	c->next = -1;
	if (p->cpu_tail >= 0)
		p->cpu[p->cpu_tail].next = o;
	else
		p->cpu_head = o;
	p->cpu_tail = o;
}

/* Drops a CPU object: its entries lose what it held. */
static void cpu_free(struct serve_pool *p, int32_t o)
{
	struct serve_pool_cpu *c = &p->cpu[o];
	if (!c->live)
		return;
	c->live = false;
	cpu_unlink(p, o);
	p->st.cpu_used_bytes -= c->bytes;
	if (c->kind == CPU_CKPT) {
		if (c->entry >= 0 && p->ent[c->entry].cpu_ckpt == o)
			p->ent[c->entry].cpu_ckpt = -1;
	} else {
		int16_t n = c->n_ents;
		c->n_ents = 0;
		for (int i = 0; i < n; i++) {
			int32_t ei = c->ents[i];
			struct serve_pool_entry *e = &p->ent[ei];
			if (!e->live || e->cpu_page != o)
				continue;
			e->cpu_page = -1;
			if (e->page < 0)
				entry_drop(p, ei);
		}
	}
	c->next = p->free_cpu;
	p->free_cpu = o;
}

static int32_t cpu_new(struct serve_pool *p, int64_t bytes, uint8_t kind)
{
	if (bytes > p->cfg.cpu_bytes)
		return -1;
	while (p->st.cpu_used_bytes + bytes > p->cfg.cpu_bytes) {
		int32_t v = p->cpu_head;
		while (v >= 0 && p->cpu[v].pins > 0)
			v = p->cpu[v].next;
		if (v < 0)
			return -1;
		cpu_free(p, v);
	}
	int32_t o;
	if (p->free_cpu >= 0) {
		o = p->free_cpu;
		p->free_cpu = p->cpu[o].next;
	} else {
		if (p->n_cpu == p->cap_cpu) {
			if (p->cap_cpu >= SERVE_POOL_MAX_BLOCKS)
				return -1;
			int32_t nc = p->cap_cpu ? p->cap_cpu * 2 : 256;
			struct serve_pool_cpu *n = realloc(p->cpu, (size_t)nc * sizeof *n);
			if (!n)
				return -1;
			p->cpu = n;
			p->cap_cpu = nc;
		}
		o = p->n_cpu++;
	}
	struct serve_pool_cpu *c = &p->cpu[o];
	memset(c, 0, sizeof *c);
	c->bytes = bytes;
	c->kind = kind;
	c->live = true;
	c->entry = -1;
	c->prev = c->next = -1;
	cpu_touch(p, o);
	p->st.cpu_used_bytes += bytes;
	if (p->st.cpu_used_bytes > p->st.cpu_peak_bytes)
		p->st.cpu_peak_bytes = p->st.cpu_used_bytes;
	p->st.offload_bytes += bytes;
	return o;
}

/* ---- eviction ---- */

/* Writes entry ei's HBM checkpoint back to CPU DRAM when it is not there yet. */
static void ckpt_writeback(struct serve_pool *p, int32_t ei)
{
	struct serve_pool_entry *e = &p->ent[ei];
	if (p->cfg.cpu_bytes <= 0 || !has_ckpt(p, e) || e->cpu_ckpt >= 0)
		return;
	int64_t bytes = p->cfg.kda_groups * p->cfg.group_bytes;
	int32_t o = cpu_new(p, bytes, CPU_CKPT);
	if (o < 0)
		return;
	p->cpu[o].entry = ei;
	e = &p->ent[ei]; /* cpu_new may have dropped entries, never this one: it is in HBM */
	e->cpu_ckpt = o;
	p->pending_offload += bytes;
}

static void evict_page(struct serve_pool *p, int32_t b)
{
	struct serve_pool_block *k = &p->blk[b];
	p->st.evicted_pages++;
	if (p->cfg.cpu_bytes > 0 && k->n_ents > 0) {
		/* write back the page with the checkpoints at its endpoints, as a unit */
		bool in_cpu = false;
		for (int i = 0; i < k->n_ents; i++)
			if (p->ent[k->ents[i]].cpu_page >= 0)
				in_cpu = true;
		if (!in_cpu) {
			int32_t o = cpu_new(p, k->bytes, CPU_PAGE);
			k = &p->blk[b];
			if (o >= 0) {
				struct serve_pool_cpu *c = &p->cpu[o];
				for (int i = 0; i < k->n_ents; i++) {
					c->ents[c->n_ents++] = k->ents[i];
					p->ent[k->ents[i]].cpu_page = o;
				}
				p->pending_offload += k->bytes;
			}
		}
		for (int i = 0; i < k->n_ents; i++)
			ckpt_writeback(p, k->ents[i]);
	}
	k = &p->blk[b];
	int16_t n = k->n_ents;
	int32_t ents[SERVE_MAX_PAGE_ENDPOINTS];
	memcpy(ents, k->ents, sizeof ents[0] * (size_t)n);
	k->n_ents = 0;
	for (int i = 0; i < n; i++) {
		struct serve_pool_entry *e = &p->ent[ents[i]];
		if (!e->live || e->page != b)
			continue;
		e->page = -1;
		ckpt_free(p, ents[i]);
		if (e->cpu_page < 0)
			entry_drop(p, ents[i]);
	}
	free_block(p, b);
}

static void evict_ckpt(struct serve_pool *p, int32_t b)
{
	int32_t ei = p->blk[b].entry;
	p->st.evicted_ckpts++;
	p->st.ckpt_invalidated += p->cfg.kda_groups - 1;
	ckpt_writeback(p, ei);
	ckpt_free(p, ei);
}

static void evict_one(struct serve_pool *p)
{
	int32_t b = p->lru_head;
	if (p->blk[b].kind == BLK_PAGE)
		evict_page(p, b);
	else
		evict_ckpt(p, b);
}

/* Evicts least recently used unpinned blocks until `bytes` more fit; false when they cannot. */
static bool make_room(struct serve_pool *p, int64_t bytes)
{
	while (p->st.used_bytes + bytes > p->cfg.capacity_bytes) {
		if (p->lru_head < 0)
			return false;
		evict_one(p);
	}
	return true;
}

static int32_t alloc_block(struct serve_pool *p, uint8_t kind, int64_t bytes)
{
	if (!make_room(p, bytes))
		return -1;
	int32_t b;
	if (p->free_blk >= 0) {
		b = p->free_blk;
		p->free_blk = p->blk[b].next;
	} else {
		if (p->n_blk == p->cap_blk) {
			if (p->cap_blk >= SERVE_POOL_MAX_BLOCKS)
				return -1;
			int32_t nc = p->cap_blk ? p->cap_blk * 2 : 1024;
			struct serve_pool_block *n = realloc(p->blk, (size_t)nc * sizeof *n);
			if (!n)
				return -1;
			p->blk = n;
			p->cap_blk = nc;
		}
		b = p->n_blk++;
	}
	struct serve_pool_block *k = &p->blk[b];
	k->bytes = bytes;
	k->ref = 0;
	k->prev = k->next = -1;
	k->entry = -1;
	k->n_ents = 0;
	k->kind = kind;
	k->in_lru = false;
	k->busy = false;
	k->group = 0;
	account(p, bytes, kind);
	return b;
}

static void pin(struct serve_pool *p, int32_t b)
{
	if (p->blk[b].ref++ == 0)
		lru_remove(p, b);
}

/* One pin less; an unpinned block is cached (LRU) when something refers to it, else freed. */
static void unpin(struct serve_pool *p, int32_t b)
{
	struct serve_pool_block *k = &p->blk[b];
	if (--k->ref > 0)
		return;
	bool cached = k->kind == BLK_CKPT || (k->kind == BLK_PAGE && k->n_ents > 0);
	if (cached)
		lru_push(p, b);
	else
		free_block(p, b);
}

/* ---- setup ---- */

int serve_pool_init(struct serve_pool *p, const struct serve_pool_cfg *cfg, struct err *e)
{
	memset(p, 0, sizeof *p);
	p->cfg = *cfg;
	if (cfg->hash_tokens < 1 || cfg->page_tokens < cfg->hash_tokens || cfg->page_tokens % cfg->hash_tokens ||
	    cfg->page_tokens / cfg->hash_tokens > SERVE_MAX_PAGE_ENDPOINTS || cfg->kda_groups < 0 ||
	    cfg->kda_groups > SERVE_MAX_KDA_GROUPS || cfg->capacity_bytes < 0) {
		err_set(e, NULL, 0, 0, "bad pool geometry: hash %lld, page %lld tokens, %d KDA groups",
			(long long)cfg->hash_tokens, (long long)cfg->page_tokens, cfg->kda_groups);
		return -EINVAL;
	}
	p->page_bytes = cfg->page_tokens * cfg->token_bytes;
	p->state_bytes = cfg->kda_groups * cfg->group_bytes;
	p->free_blk = p->free_ent = p->free_cpu = -1;
	p->lru_head = p->lru_tail = p->cpu_head = p->cpu_tail = -1;
	if (tab_grow(p) < 0) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

void serve_pool_free(struct serve_pool *p)
{
	free(p->blk);
	free(p->ent);
	free(p->tab_key);
	free(p->tab_val);
	free(p->cpu);
	free(p->walk_range);
	memset(p, 0, sizeof *p);
}

/* ---- lookup ---- */

struct walk {
	int64_t best;         /* matched endpoints */
	int32_t best_entry;
	int64_t cpu_bytes;
	bool ckpt_cpu;        /* the matched checkpoint is only in CPU DRAM */
};

static bool page_ready(const struct serve_pool *p, const struct serve_pool_entry *e)
{
	return e->page >= 0 && !p->blk[e->page].busy;
}

static bool ckpt_ready(const struct serve_pool *p, const struct serve_pool_entry *e, bool *cpu)
{
	*cpu = false;
	if (p->cfg.kda_groups == 0)
		return true;
	if (e->ckpt[0] >= 0) {
		for (int g = 0; g < p->cfg.kda_groups; g++)
			if (e->ckpt[g] < 0 || p->blk[e->ckpt[g]].busy)
				return false;
		return true;
	}
	if (e->cpu_ckpt >= 0) {
		*cpu = true;
		return true;
	}
	return false;
}

/* Walks q's endpoints within `tokens`; walk_range[j] gets the entry whose page holds range j. */
static void walk(struct serve_pool *p, const struct serve_request *q, int64_t tokens, struct walk *w)
{
	memset(w, 0, sizeof *w);
	w->best_entry = -1;
	if (!p->cfg.prefix || tokens < p->cfg.hash_tokens)
		return;
	const int64_t H = p->cfg.hash_tokens, PT = p->cfg.page_tokens;
	int64_t n = tokens / H, ranges = (n * H + PT - 1) / PT + 1;
	if (ranges > p->walk_cap) {
		int32_t *r = realloc(p->walk_range, (size_t)ranges * sizeof *r);
		if (!r)
			return;
		p->walk_range = r;
		p->walk_cap = ranges;
	}
	int32_t *walk_range = p->walk_range;
	uint64_t chain = 0;
	bool best_ckpt_cpu = false;
	for (int64_t i = 0; i < n; i++) {
		chain = serve_mix(chain, serve_block_id(q, i, H));
		int32_t ei = tab_find(p, chain);
		if (ei < 0)
			break;
		const struct serve_pool_entry *e = &p->ent[ei];
		bool hbm = page_ready(p, e);
		if (!hbm && (e->page >= 0 || e->cpu_page < 0))
			break; /* being prefetched, or nowhere */
		walk_range[((i + 1) * H - 1) / PT] = ei;
		bool cpu;
		if (ckpt_ready(p, e, &cpu)) {
			w->best = i + 1;
			w->best_entry = ei;
			best_ckpt_cpu = cpu;
		}
	}
	if (!w->best)
		return;
	/* bytes to bring back from CPU DRAM: pages of the ranges used, the checkpoint */
	int64_t end = w->best * H, last = (end - 1) / PT;
	for (int64_t j = 0; j <= last; j++) {
		const struct serve_pool_entry *e = &p->ent[j == last ? w->best_entry : p->walk_range[j]];
		if (!page_ready(p, e))
			w->cpu_bytes += j == last ? (end - j * PT) * p->cfg.token_bytes : p->page_bytes;
	}
	if (best_ckpt_cpu)
		w->cpu_bytes += p->state_bytes;
	w->ckpt_cpu = best_ckpt_cpu;
}

void serve_pool_lookup(struct serve_pool *p, const struct serve_request *q, int64_t tokens,
		       struct serve_pool_match *out)
{
	struct walk w;
	walk(p, q, tokens, &w);
	memset(out, 0, sizeof *out);
	if (!w.best)
		return;
	const int64_t H = p->cfg.hash_tokens, PT = p->cfg.page_tokens;
	out->tokens = w.best * H;
	out->endpoint = w.best - 1;
	out->cpu_bytes = w.cpu_bytes;
	out->cpu = w.cpu_bytes > 0;
	int64_t partial = out->tokens % PT;
	const struct serve_pool_entry *e = &p->ent[w.best_entry];
	if (partial && page_ready(p, e))
		out->copy_bytes += 2 * partial * p->cfg.token_bytes;
	if (p->cfg.kda_groups > 0)
		out->copy_bytes += 2 * p->state_bytes;
}

int64_t serve_pool_need(const struct serve_pool *p, int64_t tokens, int64_t match_tokens)
{
	const int64_t PT = p->cfg.page_tokens;
	int64_t pages = (tokens + PT - 1) / PT - match_tokens / PT;
	return p->state_bytes + (pages > 0 ? pages : 0) * p->page_bytes;
}

int64_t serve_pool_available(const struct serve_pool *p)
{
	return p->cfg.capacity_bytes - p->st.used_bytes + p->lru_bytes;
}

int64_t serve_pool_pinned_bytes(const struct serve_pool *p)
{
	return p->st.used_bytes - p->lru_bytes;
}

double serve_pool_used_share(const struct serve_pool *p)
{
	return p->cfg.capacity_bytes > 0 ? (double)p->st.used_bytes / (double)p->cfg.capacity_bytes : 1.0;
}

int64_t serve_pool_take_offload(struct serve_pool *p)
{
	int64_t b = p->pending_offload;
	p->pending_offload = 0;
	return b;
}

/* ---- requests ---- */

static int seq_push(struct serve_pool_seq *sq, int32_t b)
{
	if (sq->n_pages == sq->cap_pages) {
		int32_t nc = sq->cap_pages ? sq->cap_pages * 2 : 8;
		int32_t *n = realloc(sq->pages, (size_t)nc * sizeof *n);
		if (!n)
			return -ENOMEM;
		sq->pages = n;
		sq->cap_pages = nc;
	}
	sq->pages[sq->n_pages++] = b;
	return 0;
}

int serve_pool_grow(struct serve_pool *p, struct serve_pool_seq *sq, int64_t tokens)
{
	const int64_t PT = p->cfg.page_tokens;
	int64_t want = (tokens + PT - 1) / PT;
	int32_t have = sq->n_pages;
	if (want <= have)
		return 0;
	if ((want - have) * p->page_bytes > serve_pool_available(p))
		return -ENOSPC;
	while (sq->n_pages < want) {
		int32_t b = alloc_block(p, BLK_PAGE, p->page_bytes);
		if (b < 0 || seq_push(sq, b) < 0) {
			if (b >= 0)
				free_block(p, b);
			while (sq->n_pages > have)
				free_block(p, sq->pages[--sq->n_pages]);
			return -ENOSPC;
		}
		p->blk[b].ref = 1;
	}
	return 0;
}

/* A page whose range comes back from CPU DRAM: it holds the range for every entry of that CPU
 * page, busy until the prefetch is done. */
static int32_t fetched_page(struct serve_pool *p, struct serve_pool_seq *sq, struct serve_pool_entry *e)
{
	int32_t b = alloc_block(p, BLK_PAGE, p->page_bytes);
	if (b < 0)
		return -1;
	struct serve_pool_block *k = &p->blk[b];
	k->ref = 1;
	k->busy = true;
	if (e->cpu_page >= 0) {
		struct serve_pool_cpu *c = &p->cpu[e->cpu_page];
		for (int i = 0; i < c->n_ents; i++) {
			struct serve_pool_entry *x = &p->ent[c->ents[i]];
			if (x->live && x->page < 0 && k->n_ents < SERVE_MAX_PAGE_ENDPOINTS) {
				x->page = b;
				k->ents[k->n_ents++] = c->ents[i];
			}
		}
	}
	sq->busy = true;
	return b;
}

/* The CPU objects an admission brings back, pinned while it allocates (at most a range each and
 * the checkpoint). */
struct cpu_pins {
	int32_t *o;
	int64_t n;
};

static void cpu_pin(struct serve_pool *p, struct cpu_pins *cp, int32_t o)
{
	p->cpu[o].pins++;
	cpu_touch(p, o);
	cp->o[cp->n++] = o;
}

static void cpu_unpin_all(struct serve_pool *p, struct cpu_pins *cp)
{
	for (int64_t i = 0; i < cp->n; i++)
		p->cpu[cp->o[i]].pins--;
	cp->n = 0;
}

int serve_pool_admit(struct serve_pool *p, struct serve_pool_seq *sq, const struct serve_request *q,
		     const struct serve_pool_match *m, int64_t tokens)
{
	memset(sq, 0, sizeof *sq);
	sq->state = sq->pin_ckpt = -1;
	const int64_t H = p->cfg.hash_tokens, PT = p->cfg.page_tokens;
	struct walk w = {.best = 0};
	if (m->tokens > 0)
		walk(p, q, m->tokens, &w);
	const int64_t match = w.best * H, full = match / PT, partial = match % PT;
	const int64_t last = match ? (match - 1) / PT : -1;
	p->st.lookups++;
	struct cpu_pins cp = {.o = NULL, .n = 0};
	int32_t copy_from = -1;
	if (match) {
		cp.o = malloc((size_t)(last + 2) * sizeof *cp.o);
		if (!cp.o)
			return -ENOMEM;
	}
	/* phase 1: pin what matched where it is, so that allocating cannot evict it; pages[j] is
	 * range j's page, -1 where it comes back from CPU DRAM */
	int64_t need = p->state_bytes, pages_total = (tokens + PT - 1) / PT;
	for (int64_t j = 0; j <= last; j++) {
		struct serve_pool_entry *e = &p->ent[j == last ? w.best_entry : p->walk_range[j]];
		bool hbm = page_ready(p, e);
		if (hbm)
			pin(p, e->page);
		else
			cpu_pin(p, &cp, e->cpu_page);
		if (j == last && partial) {
			/* the source of the partial page's copy, not a page of the request */
			if (hbm)
				copy_from = e->page;
			continue;
		}
		if (seq_push(sq, hbm ? e->page : -1) < 0) {
			if (hbm)
				unpin(p, e->page);
			goto fail;
		}
		if (!hbm)
			need += p->page_bytes;
	}
	if (match && p->cfg.kda_groups > 0) {
		struct serve_pool_entry *e = &p->ent[w.best_entry];
		if (e->ckpt[0] >= 0) {
			for (int g = 0; g < p->cfg.kda_groups; g++)
				pin(p, e->ckpt[g]);
			sq->pin_ckpt = w.best_entry;
		} else {
			cpu_pin(p, &cp, e->cpu_ckpt);
			need += p->state_bytes;
		}
	}
	need += (pages_total > full ? pages_total - full : 0) * p->page_bytes;
	if (need > p->cfg.capacity_bytes - p->st.used_bytes + p->lru_bytes)
		goto fail;
	/* phase 2: bring back what is only in CPU DRAM, the partial page, the state, the rest */
	for (int64_t j = 0; j < full; j++) {
		if (sq->pages[j] >= 0)
			continue;
		struct serve_pool_entry *e = &p->ent[j == last ? w.best_entry : p->walk_range[j]];
		int32_t b = fetched_page(p, sq, e);
		if (b < 0)
			goto fail;
		sq->pages[j] = b;
		p->st.prefetch_bytes += p->page_bytes;
	}
	if (partial) {
		int32_t b = alloc_block(p, BLK_PAGE, p->page_bytes);
		if (b < 0 || seq_push(sq, b) < 0)
			goto fail;
		p->blk[b].ref = 1;
		if (copy_from < 0) {
			p->blk[b].busy = true;
			sq->busy = true;
			p->st.prefetch_bytes += partial * p->cfg.token_bytes;
		}
	}
	if (match && p->cfg.kda_groups > 0 && sq->pin_ckpt < 0) {
		/* the checkpoint comes back from CPU DRAM */
		for (int g = 0; g < p->cfg.kda_groups; g++) {
			int32_t b = alloc_block(p, BLK_CKPT, p->cfg.group_bytes);
			if (b < 0) {
				ckpt_free(p, w.best_entry);
				goto fail;
			}
			p->blk[b].entry = w.best_entry;
			p->blk[b].group = (int8_t)g;
			p->blk[b].busy = true;
			p->blk[b].ref = 1;
			p->ent[w.best_entry].ckpt[g] = b;
		}
		sq->busy_ckpt = true;
		sq->pin_ckpt = w.best_entry;
		p->st.prefetch_bytes += p->state_bytes;
	}
	if (p->cfg.kda_groups > 0) {
		int32_t b = alloc_block(p, BLK_STATE, p->state_bytes);
		if (b < 0)
			goto fail;
		p->blk[b].ref = 1;
		sq->state = b;
	}
	if (serve_pool_grow(p, sq, tokens) < 0)
		goto fail;
	cpu_unpin_all(p, &cp);
	free(cp.o);
	if (copy_from >= 0)
		unpin(p, copy_from);
	if (match) {
		/* the matched endpoints are this request's too */
		uint64_t chain = 0;
		for (int64_t i = 0; i < w.best; i++)
			chain = serve_mix(chain, serve_block_id(q, i, H));
		sq->chain = chain;
		sq->registered = w.best;
		p->st.hits++;
		p->st.hit_tokens += match;
	}
	return 0;
fail:
	cpu_unpin_all(p, &cp);
	free(cp.o);
	if (copy_from >= 0)
		unpin(p, copy_from);
	serve_pool_release(p, sq);
	return -ENOSPC;
}

void serve_pool_prefetch_done(struct serve_pool *p, struct serve_pool_seq *sq)
{
	if (sq->busy)
		for (int32_t i = 0; i < sq->n_pages; i++)
			if (sq->pages[i] >= 0)
				p->blk[sq->pages[i]].busy = false;
	sq->busy = false;
	if (sq->busy_ckpt && sq->pin_ckpt >= 0) {
		struct serve_pool_entry *e = &p->ent[sq->pin_ckpt];
		for (int g = 0; g < p->cfg.kda_groups; g++)
			if (e->ckpt[g] >= 0)
				p->blk[e->ckpt[g]].busy = false;
	}
	sq->busy_ckpt = false;
}

void serve_pool_restored(struct serve_pool *p, struct serve_pool_seq *sq)
{
	if (sq->pin_ckpt < 0)
		return;
	struct serve_pool_entry *e = &p->ent[sq->pin_ckpt];
	for (int g = 0; g < p->cfg.kda_groups; g++)
		if (e->ckpt[g] >= 0) {
			p->blk[e->ckpt[g]].busy = false;
			unpin(p, e->ckpt[g]);
		}
	sq->pin_ckpt = -1;
	sq->busy_ckpt = false;
}

int64_t serve_pool_register(struct serve_pool *p, struct serve_pool_seq *sq, const struct serve_request *q,
			    int64_t computed, serve_ckpt_fn ckpt_at, const void *ctx)
{
	if (!p->cfg.prefix)
		return 0;
	const int64_t H = p->cfg.hash_tokens, PT = p->cfg.page_tokens;
	int64_t n = computed / H, written = 0;
	for (int64_t i = sq->registered; i < n; i++) {
		int64_t range = ((i + 1) * H - 1) / PT;
		if (range >= sq->n_pages)
			break;
		sq->chain = serve_mix(sq->chain, serve_block_id(q, i, H));
		sq->registered = i + 1;
		int32_t b = sq->pages[range];
		if (p->blk[b].busy)
			continue;
		int32_t ei = tab_find(p, sq->chain);
		if (ei < 0) {
			if (p->blk[b].n_ents >= SERVE_MAX_PAGE_ENDPOINTS)
				continue;
			ei = entry_new(p, sq->chain);
			if (ei < 0)
				continue;
		}
		struct serve_pool_entry *e = &p->ent[ei];
		if (e->page < 0) {
			e->page = b;
			p->blk[b].ents[p->blk[b].n_ents++] = ei;
		}
		if (p->cfg.kda_groups > 0 && e->ckpt[0] < 0 && ckpt_at && ckpt_at(ctx, (i + 1) * H) &&
		    e->page >= 0) {
			/* a copy of every group's state at this endpoint (taken as the step passes it); the
			 * entry's page (maybe another request's cached one) is pinned meanwhile, so that
			 * making room cannot drop the entry */
			int32_t pg = e->page;
			pin(p, pg);
			int g;
			for (g = 0; g < p->cfg.kda_groups; g++) {
				int32_t c = alloc_block(p, BLK_CKPT, p->cfg.group_bytes);
				e = &p->ent[ei];
				if (c < 0)
					break;
				p->blk[c].entry = ei;
				p->blk[c].group = (int8_t)g;
				e->ckpt[g] = c;
			}
			if (g < p->cfg.kda_groups) {
				ckpt_free(p, ei);
				unpin(p, pg);
				continue;
			}
			for (g = 0; g < p->cfg.kda_groups; g++)
				lru_push(p, e->ckpt[g]);
			unpin(p, pg);
			written += p->state_bytes;
			p->st.ckpt_written_bytes += p->state_bytes;
		}
	}
	return written;
}

void serve_pool_release(struct serve_pool *p, struct serve_pool_seq *sq)
{
	if (sq->pin_ckpt >= 0 && sq->busy_ckpt) {
		/* its prefetch never finished: the blocks hold nothing */
		struct serve_pool_entry *e = &p->ent[sq->pin_ckpt];
		for (int g = 0; g < p->cfg.kda_groups; g++)
			if (e->ckpt[g] >= 0)
				p->blk[e->ckpt[g]].ref = 0;
		ckpt_free(p, sq->pin_ckpt);
		sq->pin_ckpt = -1;
	}
	if (sq->pin_ckpt >= 0)
		serve_pool_restored(p, sq);
	for (int32_t i = 0; sq->busy && i < sq->n_pages; i++) {
		if (sq->pages[i] < 0 || !p->blk[sq->pages[i]].busy)
			continue;
		struct serve_pool_block *k = &p->blk[sq->pages[i]];
		for (int x = 0; x < k->n_ents; x++)
			if (p->ent[k->ents[x]].page == sq->pages[i])
				p->ent[k->ents[x]].page = -1;
		k->n_ents = 0;
		k->busy = false;
	}
	for (int32_t i = sq->n_pages - 1; i >= 0; i--)
		if (sq->pages[i] >= 0)
			unpin(p, sq->pages[i]);
	if (sq->state >= 0)
		free_block(p, sq->state);
	free(sq->pages);
	memset(sq, 0, sizeof *sq);
	sq->state = sq->pin_ckpt = -1;
}

int serve_pool_check(const struct serve_pool *p)
{
	int64_t used = 0, ckpt = 0;
	for (int32_t b = 0; b < p->n_blk; b++) {
		const struct serve_pool_block *k = &p->blk[b];
		if (k->kind == BLK_FREE)
			continue;
		used += k->bytes;
		if (k->kind == BLK_CKPT)
			ckpt += k->bytes;
		if (k->ref < 0 || (k->in_lru && k->ref > 0))
			return -EINVAL;
		if (k->kind == BLK_PAGE)
			for (int i = 0; i < k->n_ents; i++) {
				const struct serve_pool_entry *e = &p->ent[k->ents[i]];
				if (!e->live || e->page != b)
					return -EINVAL;
			}
		if (k->kind == BLK_CKPT) {
			const struct serve_pool_entry *e = &p->ent[k->entry];
			if (!e->live || e->ckpt[k->group] != b)
				return -EINVAL;
		}
	}
	if (used != p->st.used_bytes || ckpt != p->st.ckpt_bytes || used > p->cfg.capacity_bytes)
		return -EINVAL;
	int64_t live = 0;
	for (int32_t i = 0; i < p->n_ent; i++) {
		const struct serve_pool_entry *e = &p->ent[i];
		if (!e->live)
			continue;
		live++;
		if (tab_find(p, e->hash) != i || (e->page < 0 && e->cpu_page < 0))
			return -EINVAL;
		if (p->cfg.kda_groups > 0 && e->ckpt[0] >= 0)
			for (int g = 0; g < p->cfg.kda_groups; g++)
				if (e->ckpt[g] < 0)
					return -EINVAL; /* siblings live and die together */
	}
	if (live != p->tab_used)
		return -EINVAL;
	int64_t cpu = 0;
	for (int32_t o = 0; o < p->n_cpu; o++)
		if (p->cpu[o].live)
			cpu += p->cpu[o].bytes;
	if (cpu != p->st.cpu_used_bytes || cpu > p->cfg.cpu_bytes)
		return -EINVAL;
	return 0;
}
