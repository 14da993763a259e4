# label: safe
# why: masked_fill_ writes into the raw bmm scores before softmax; bmm saved only its inputs, so the in-place fill is harmless
# source: https://github.com/KaijuML/data-to-text-hierarchical/pull/4 (file onmt/modules/hierarchical_attention.py @ 79dbccf0ad761fbd7bd214f617b4771b3d18bea6)
import torch

torch.manual_seed(0)

ENT_SIZE = 3


class AttentionScorer(torch.nn.Module):
    def __init__(self, dim, attn_type="general"):
        super().__init__()
        if isinstance(dim, tuple):
            self.dim_query, self.dim_key = dim
        else:
            self.dim_query = self.dim_key = dim
        self.attn_type = attn_type
        self.linear_in = torch.nn.Linear(self.dim_query, self.dim_key, bias=False)

    def forward(self, h_t, h_s):
        src_batch, src_len, src_dim = h_s.size()
        tgt_batch, tgt_len, tgt_dim = h_t.size()
        if self.attn_type == "general":
            h_t_ = h_t.view(tgt_batch * tgt_len, tgt_dim)
            h_t_ = self.linear_in(h_t_)
            h_t = h_t_.view(tgt_batch, tgt_len, src_dim)
        h_s_ = h_s.transpose(1, 2)
        return torch.bmm(h_t, h_s_)


class HierarchicalAttention(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ent_size = ENT_SIZE
        self.chunks_dim = self.units_dim = dim
        self.attn_func = torch.nn.functional.softmax
        self.unit_scorer = AttentionScorer((dim, dim))
        self.chunk_scorer = AttentionScorer(dim)
        self.linear_out = torch.nn.Linear(dim * 2, dim, bias=False)

    def forward(self, source, memory_bank):
        source = source.unsqueeze(1)
        chunks, memory_bank, pos_embs, units_mask, chunk_mask = memory_bank
        chunks = chunks.transpose(0, 1)
        memory_bank = memory_bank.transpose(0, 1)
        pos_embs = pos_embs.transpose(0, 1)
        units_mask = units_mask.transpose(0, 1)
        chunk_mask = chunk_mask.transpose(0, 1)

        batch_size, source_l, dim = memory_bank.size()
        align_units = self.unit_scorer(source, pos_embs).squeeze(1)
        align_chunks = self.chunk_scorer(source, chunks)

        align_units = align_units.view(batch_size, -1, self.ent_size)
        align_units = align_units.masked_fill(units_mask, float("-inf"))
        align_units = self.attn_func(align_units, -1)
        nan_mask = (align_units != align_units).sum(dim=2).ne(0)
        if nan_mask.sum().item():
            align_units = align_units.masked_fill(nan_mask.unsqueeze(-1), 0)
        align_units = align_units.view(batch_size, 1, -1)

        # second level of attention, on the <ent> tokens
        align_chunks.masked_fill_(chunk_mask, -1)
        align_chunks = self.attn_func(align_chunks, -1)

        align_chunks_inflated = align_chunks.repeat_interleave(repeats=self.ent_size, dim=-1)
        align_vectors = align_chunks_inflated * align_units
        c = torch.bmm(align_vectors, memory_bank)
        concat_c = torch.cat([c, source], 2).view(batch_size, dim * 2)
        attn_h = torch.tanh(self.linear_out(concat_c))
        ret = {"": align_vectors.squeeze(1), "_align_chunks": align_chunks.squeeze(1)}
        return attn_h, ret


batch, n_ents, dim = 2, 2, 4
src_len = n_ents * ENT_SIZE
attn = HierarchicalAttention(dim)
chunks = torch.randn(n_ents, batch, dim, requires_grad=True)
memory = torch.randn(src_len, batch, dim, requires_grad=True)
pos_embs = torch.randn(src_len, batch, dim)
units_mask = torch.zeros(n_ents, batch, ENT_SIZE, dtype=torch.bool)
units_mask[:, :, 0] = True
units_mask = units_mask.transpose(0, 1).transpose(0, 1)
chunk_mask = torch.tensor([[[False, True]], [[False, False]]]).permute(1, 0, 2)
query = torch.randn(batch, dim)

attn_h, scores = attn(query, (chunks, memory, pos_embs, units_mask, chunk_mask))
loss = attn_h.pow(2).sum() + scores["_align_chunks"][:, 0].sum()
loss.backward()
chunks_grad = chunks.grad
memory_grad = memory.grad
