# Two small random-initialized models for `k3sim trace profile` (issue 16), both run as ordinary
# PyTorch programs (nothing k3sim-specific inside the models):
#   dsv3   - Hugging Face transformers' DeepseekV3ForCausalLM (MLA + MoE) at small dimensions,
#            built from a DeepseekV3Config (no download);
#   hybrid - a Kimi-Linear-style hybrid written here in plain PyTorch with the structure of
#            data/kimi-k3-config.json (tests/data/kimi-k3-config.json) at small dimensions:
#            KDA-like chunked gated delta-rule layers with short convolutions, MLA layers
#            (every 4th and the last, with an output gate), a dense first FFN, LatentMoE
#            (router with sigmoid top-k, down projection to a latent width, routed experts
#            through torch._grouped_mm, up projection, shared expert).
# Both: prefill of B x T tokens, then greedy decode steps with a cache; each step is wrapped in
# torch.autograd.profiler.record_function("prefill") / ("decode") (a user range in emit_nvtx and
# torch.profiler alike), and a warm-up step pair runs first under "warmup".
import json
import math
import os

import torch
import torch.nn.functional as F
from torch import nn

DT = torch.bfloat16


# ---------------------------------------------------------------- Hugging Face DeepSeek-V3
def build_dsv3():
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

    kw = dict(vocab_size=32768, hidden_size=2048, intermediate_size=5632, moe_intermediate_size=768,
              num_hidden_layers=4, first_k_dense_replace=1, n_routed_experts=32, num_experts_per_tok=4,
              n_shared_experts=1, n_group=4, topk_group=2, num_attention_heads=16, num_key_value_heads=16,
              q_lora_rank=768, kv_lora_rank=256, qk_rope_head_dim=64, qk_nope_head_dim=128,
              v_head_dim=128, max_position_embeddings=8192, tie_word_embeddings=False)
    cfg = DeepseekV3Config(**kw)
    try:
        cfg._attn_implementation = os.environ.get("ATTN", "sdpa")
    except Exception as ex:  # noqa: BLE001 - the default then
        print("attn_implementation not set:", ex)
    torch.manual_seed(0)
    # built on the CPU and moved (a copy, not kernels): the GPU trace holds only the run
    model = DeepseekV3ForCausalLM(cfg).to(dtype=DT, device="cuda").eval()
    print("dsv3: attention", getattr(model.config, "_attn_implementation", None),
          "experts", getattr(model.config, "_experts_implementation", None))
    return model, cfg.vocab_size


class HFStep:
    """One forward with a DynamicCache, as generate() does for greedy search."""

    def __init__(self, model):
        self.model = model
        self.cache = None

    def reset(self):
        from transformers import DynamicCache
        self.cache = DynamicCache()

    def __call__(self, ids):
        out = self.model(input_ids=ids, past_key_values=self.cache, use_cache=True)
        self.cache = out.past_key_values
        return out.logits[:, -1, :]


# ---------------------------------------------------------------- Kimi-Linear-style hybrid
def load_k3_config():
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.path.join(here, "kimi-k3-config.json"),
              os.path.join(here, "..", "..", "tests", "data", "kimi-k3-config.json")):
        if os.path.exists(p):
            with open(p) as f:
                return json.load(f)
    raise SystemExit("kimi-k3-config.json not found")


def small_hybrid_config(k3):
    """K3's structure at small dims: layer kinds from the published lists, scaled widths."""
    la = k3["linear_attn_config"]
    n_layers = 8  # K3's pattern KDA KDA KDA MLA, twice (layers 1-8, 1-based)
    kda = [i for i in la["kda_layers"] if i <= n_layers]
    return dict(hidden=1024, layers=n_layers, kda_layers=kda, heads=8, head_dim=128,
                conv=la["short_conv_kernel_size"], gate_lb=la["gate_lower_bound"],
                q_lora=384, kv_lora=256, qk_nope=64, qk_rope=32, v_dim=64,
                dense_ffn=2816, experts=64, top_k=8, latent=512, expert_ffn=384,
                shared_ffn=1024, vocab=32768, chunk=16)


def rms(x, w, eps=1e-6):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def situ(x, beta=4.0):  # a smooth gate as in K3's "situ" activation (shape only)
    return x * torch.sigmoid(beta * x)


class KDA(nn.Module):
    """Kimi Delta Attention, written in plain PyTorch: per-channel decay gate, short convolutions
    on q/k/v, L2-normalized q/k, delta-rule state update. Prefill is chunked (chunk c: a
    triangular solve per chunk, then the state carried chunk to chunk); decode is recurrent."""

    def __init__(self, c):
        super().__init__()
        h, d, hid = c["heads"], c["head_dim"], c["hidden"]
        self.h, self.d, self.k_conv, self.chunk, self.lb = h, d, c["conv"], c["chunk"], c["gate_lb"]
        self.qkv = nn.Linear(hid, 3 * h * d, bias=False)
        self.conv_w = nn.Parameter(torch.randn(3 * h * d, 1, self.k_conv) * 0.3)
        self.g_a = nn.Linear(hid, d, bias=False)       # full-rank gate through a low-rank pair
        self.g_b = nn.Linear(d, h * d, bias=False)
        self.beta = nn.Linear(hid, h, bias=False)
        self.o_g = nn.Linear(hid, h * d, bias=False)   # output gate (gated RMSNorm)
        self.o_norm = nn.Parameter(torch.ones(d))
        self.o = nn.Linear(h * d, hid, bias=False)

    def forward(self, x, st):
        B, T, _ = x.shape
        h, d = self.h, self.d
        qkv = self.qkv(x).transpose(1, 2)  # [B, 3hd, T]
        if st.get("conv") is None:
            st["conv"] = torch.zeros(B, qkv.shape[1], self.k_conv - 1, device=x.device, dtype=x.dtype)
        full = torch.cat([st["conv"], qkv], dim=2)
        st["conv"] = full[:, :, -(self.k_conv - 1):].contiguous()
        qkv = F.silu(F.conv1d(full, self.conv_w, groups=qkv.shape[1])).transpose(1, 2)
        q, k, v = qkv.reshape(B, T, 3, h, d).unbind(2)
        q = F.normalize(q.float(), dim=-1)
        k = F.normalize(k.float(), dim=-1)
        v = v.float()
        g = self.lb * torch.sigmoid(self.g_b(self.g_a(x)).float()).reshape(B, T, h, d)  # log decay
        beta = torch.sigmoid(self.beta(x).float())  # [B, T, h]
        if st.get("S") is None:
            st["S"] = torch.zeros(B, h, d, d, device=x.device, dtype=torch.float32)
        S = st["S"]
        if T == 1:
            q, k, v, g, beta = q[:, 0], k[:, 0], v[:, 0], g[:, 0], beta[:, 0]
            S = S * g.exp().unsqueeze(-1)
            kv = torch.einsum("bhk,bhkv->bhv", k, S)
            S = S + torch.einsum("bhk,bhv->bhkv", k, beta.unsqueeze(-1) * (v - kv))
            o = torch.einsum("bhk,bhkv->bhv", q, S).unsqueeze(1)
        else:
            c = self.chunk
            n = T // c
            q, k, v, g = (t.reshape(B, n, c, h, -1).permute(0, 3, 1, 2, 4) for t in (q, k, v, g))
            beta = beta.reshape(B, n, c, h).permute(0, 3, 1, 2)
            gc = g.cumsum(-2)  # [B, h, n, c, d]
            kd, ki, qd = k * gc.exp(), k * (-gc).exp(), q * gc.exp()
            eye = torch.eye(c, device=x.device)
            A = torch.tril(beta.unsqueeze(-1) * (kd @ ki.transpose(-1, -2)), -1)
            Tm = torch.linalg.solve_triangular(eye + A, eye.expand_as(A), upper=False)
            w = Tm @ (beta.unsqueeze(-1) * kd)
            u = Tm @ (beta.unsqueeze(-1) * v)
            Aqk = torch.tril(qd @ ki.transpose(-1, -2))
            outs = []
            for i in range(n):
                vn = u[:, :, i] - w[:, :, i] @ S
                outs.append(qd[:, :, i] @ S + Aqk[:, :, i] @ vn)
                glast = gc[:, :, i, -1:]  # [B, h, 1, d]
                S = S * glast.transpose(-1, -2).exp() + (k[:, :, i] * (glast - gc[:, :, i]).exp()).transpose(-1, -2) @ vn
            o = torch.stack(outs, 2).reshape(B, h, T, d).transpose(1, 2)
        st["S"] = S
        o = rms(o.to(x.dtype), self.o_norm) * torch.sigmoid(self.o_g(x)).reshape(B, T, h, d)
        return self.o(o.reshape(B, T, h * d))


class MLA(nn.Module):
    """Multi-head latent attention (DeepSeek-style, non-absorbed) with an output gate."""

    def __init__(self, c):
        super().__init__()
        hid, h = c["hidden"], c["heads"]
        self.h, self.nope, self.rope, self.vd, self.kvl = h, c["qk_nope"], c["qk_rope"], c["v_dim"], c["kv_lora"]
        self.q_a = nn.Linear(hid, c["q_lora"], bias=False)
        self.q_norm = nn.Parameter(torch.ones(c["q_lora"]))
        self.q_b = nn.Linear(c["q_lora"], h * (self.nope + self.rope), bias=False)
        self.kv_a = nn.Linear(hid, self.kvl + self.rope, bias=False)
        self.kv_norm = nn.Parameter(torch.ones(self.kvl))
        self.kv_b = nn.Linear(self.kvl, h * (self.nope + self.vd), bias=False)
        self.gate = nn.Linear(hid, h * self.vd, bias=False)
        self.o = nn.Linear(h * self.vd, hid, bias=False)

    def forward(self, x, st, pos):
        B, T, _ = x.shape
        h = self.h
        q = self.q_b(rms(self.q_a(x), self.q_norm)).reshape(B, T, h, -1).transpose(1, 2)
        q_nope, q_pe = q.split([self.nope, self.rope], -1)
        ckv = self.kv_a(x)
        c_kv, k_pe = ckv.split([self.kvl, self.rope], -1)
        kv = self.kv_b(rms(c_kv, self.kv_norm)).reshape(B, T, h, -1).transpose(1, 2)
        k_nope, v = kv.split([self.nope, self.vd], -1)
        inv = 1.0 / (10000 ** (torch.arange(0, self.rope, 2, device=x.device).float() / self.rope))
        ang = (pos[:, None].float() * inv[None]).to(x.dtype)
        cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)

        def rope(t):
            t1, t2 = t.chunk(2, -1)
            return t * cos + torch.cat([-t2, t1], -1) * sin
        q_pe, k_pe = rope(q_pe), rope(k_pe.unsqueeze(1)).expand(B, h, T, self.rope)
        qf = torch.cat([q_nope, q_pe], -1)
        kf = torch.cat([k_nope, k_pe], -1)
        if st.get("k") is not None:
            kf = torch.cat([st["k"], kf], 2)
            v = torch.cat([st["v"], v], 2)
        st["k"], st["v"] = kf, v
        o = F.scaled_dot_product_attention(qf, kf, v, is_causal=T > 1)
        o = o.transpose(1, 2).reshape(B, T, h * self.vd)
        return self.o(o * torch.sigmoid(self.gate(x)))


class DenseFFN(nn.Module):
    def __init__(self, hid, ffn):
        super().__init__()
        self.gu = nn.Linear(hid, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, hid, bias=False)

    def forward(self, x):
        g, u = self.gu(x).chunk(2, -1)
        return self.down(situ(g) * u)


def grouped_mm(a, b, offs, counts):
    """torch._grouped_mm where this PyTorch has it (one grouped GEMM kernel), else a loop of mm."""
    global HAVE_GROUPED_MM
    if HAVE_GROUPED_MM:
        try:
            gm = getattr(F, "grouped_mm", None) or torch._grouped_mm
            return gm(a, b, offs=offs)
        except Exception as ex:  # noqa: BLE001 - report and fall back
            print("torch._grouped_mm unavailable (%s): a loop of mm instead" % ex)
            HAVE_GROUPED_MM = False
    outs, s = [], 0
    for e, n in enumerate(counts.tolist()):
        outs.append(a[s:s + n] @ b[e])
        s += n
    return torch.cat(outs, 0)


HAVE_GROUPED_MM = hasattr(torch, "_grouped_mm")


class LatentMoE(nn.Module):
    """Router (sigmoid, top-k, renormalized), down projection to the latent width, routed experts
    as grouped GEMMs over tokens sorted by expert (torch._grouped_mm), up projection, shared
    expert in the hidden width."""

    def __init__(self, c):
        super().__init__()
        hid, L, E, F_ = c["hidden"], c["latent"], c["experts"], c["expert_ffn"]
        self.E, self.k = E, c["top_k"]
        self.router = nn.Linear(hid, E, bias=False)
        self.bias = nn.Parameter(torch.zeros(E))
        self.down = nn.Linear(hid, L, bias=False)
        self.norm = nn.Parameter(torch.ones(L))
        self.w13 = nn.Parameter(torch.randn(E, L, 2 * F_) / math.sqrt(L))
        self.w2 = nn.Parameter(torch.randn(E, F_, L) / math.sqrt(F_))
        self.up = nn.Linear(L, hid, bias=False)
        self.shared = DenseFFN(hid, c["shared_ffn"])

    def forward(self, x):
        B, T, hid = x.shape
        xt = x.reshape(-1, hid)
        s = torch.sigmoid(self.router(xt).float())
        idx = torch.topk(s + self.bias.float(), self.k, dim=-1).indices
        wts = s.gather(1, idx)
        wts = wts / wts.sum(-1, keepdim=True)
        lat = rms(self.down(xt), self.norm)
        flat = idx.reshape(-1)
        order = torch.argsort(flat)
        tok = order // self.k
        counts = torch.bincount(flat, minlength=self.E)
        offs = torch.cumsum(counts, 0).to(torch.int32)
        xs = lat[tok]
        h13 = grouped_mm(xs, self.w13, offs, counts)
        g, u = h13.chunk(2, -1)
        y = grouped_mm((situ(g) * u).contiguous(), self.w2, offs, counts)
        y = y * wts.reshape(-1)[order].unsqueeze(-1).to(y.dtype)
        out = torch.zeros_like(lat).index_add_(0, tok, y)
        return self.up(out).reshape(B, T, hid) + self.shared(x)


class Hybrid(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.emb = nn.Embedding(c["vocab"], c["hidden"])
        self.attn, self.ffn, self.n1, self.n2 = nn.ModuleList(), nn.ModuleList(), nn.ParameterList(), nn.ParameterList()
        for i in range(1, c["layers"] + 1):
            self.attn.append(KDA(c) if i in c["kda_layers"] else MLA(c))
            self.ffn.append(DenseFFN(c["hidden"], c["dense_ffn"]) if i == 1 else LatentMoE(c))
            self.n1.append(nn.Parameter(torch.ones(c["hidden"])))
            self.n2.append(nn.Parameter(torch.ones(c["hidden"])))
        self.norm = nn.Parameter(torch.ones(c["hidden"]))
        self.head = nn.Linear(c["hidden"], c["vocab"], bias=False)

    def forward(self, ids, states, pos):
        x = self.emb(ids)
        for a, f, n1, n2, st in zip(self.attn, self.ffn, self.n1, self.n2, states):
            y = rms(x, n1)
            x = x + (a(y, st) if isinstance(a, KDA) else a(y, st, pos))
            x = x + f(rms(x, n2))
        return self.head(rms(x, self.norm))


def build_hybrid():
    c = small_hybrid_config(load_k3_config())
    torch.manual_seed(0)
    m = Hybrid(c)  # built on the CPU and moved (a copy, not kernels)
    for n_, p in m.named_parameters():
        if p.dim() >= 2 and "w13" not in n_ and "w2" not in n_ and "conv_w" not in n_:
            nn.init.normal_(p, std=0.02)
    return m.to(dtype=DT, device="cuda").eval(), c["vocab"]


class HybridStep:
    def __init__(self, model):
        self.model = model
        self.states, self.pos = None, 0

    def reset(self):
        self.states, self.pos = [dict() for _ in self.model.attn], 0

    def __call__(self, ids):
        T = ids.shape[1]
        pos = torch.arange(self.pos, self.pos + T, device=ids.device)
        self.pos += T
        return self.model(ids, self.states, pos)[:, -1, :]
