# label: hazard silent
# why: in S2SBeamSearcher.forward the running sequence_scores is just another name for the top-k scores (sequence_scores = scores, no length normalization in the RNN searcher), so the coverage penalty applied in place with scores -= penalty also lowers sequence_scores and is silently re-accumulated into every later step's beam ranking.
# source: https://github.com/speechbrain/speechbrain/commit/134b2f7bc202534b62a8427bf10fa120e14afbe0 ("change scores -= penalty to scores = scores - penalty", speechbrain/decoders/seq2seq.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class AttentionalRNNDecoder(nn.Module):
    def __init__(self, emb_dim, enc_dim, hidden_size):
        super().__init__()
        self.attn_type = "content"
        self.rnn = nn.GRUCell(emb_dim + enc_dim, hidden_size)
        self.proj = nn.Linear(hidden_size, enc_dim)

    def forward_step(self, inp, hs, c, enc_states, enc_lens):
        hs = self.rnn(torch.cat([inp, c], dim=-1), hs)
        scores = torch.bmm(enc_states, self.proj(hs).unsqueeze(-1)).squeeze(-1)
        w = torch.softmax(scores, dim=-1)
        c = torch.bmm(w.unsqueeze(1), enc_states).squeeze(1)
        return hs, hs, c, w


class S2SRNNBeamSearcher(nn.Module):
    def __init__(self, embedding, decoder, linear, bos_index=0, eos_index=1, beam_size=3,
                 max_decode_ratio=1.0, length_normalization=False, coverage_penalty=True):
        super().__init__()
        self.emb = embedding
        self.dec = decoder
        self.fc = linear
        self.softmax = nn.LogSoftmax(dim=-1)
        self.bos_index = bos_index
        self.eos_index = eos_index
        self.beam_size = beam_size
        self.max_decode_ratio = max_decode_ratio
        self.length_normalization = length_normalization
        self.coverage_penalty = coverage_penalty
        self.length_rewarding = 0.0

    def forward_step(self, inp_tokens, memory, enc_states, enc_lens):
        hs, c = memory
        e = self.emb(inp_tokens)
        dec_out, hs, c, w = self.dec.forward_step(e, hs, c, enc_states, enc_lens)
        log_probs = self.softmax(self.fc(dec_out))
        return log_probs, (hs, c), w

    def permute_mem(self, memory, index):
        hs, c = memory
        return torch.index_select(hs, dim=0, index=index), torch.index_select(c, dim=0, index=index)

    def _update_hyp_and_scores(self, inp_tokens, alived_seq, hyps_and_scores, scores, timesteps):
        is_eos = inp_tokens.eq(self.eos_index)
        (eos_indices,) = torch.nonzero(is_eos, as_tuple=True)
        for index in eos_indices:
            index = index.item()
            batch_id = index // self.beam_size
            if len(hyps_and_scores[batch_id]) == self.beam_size:
                continue
            final_scores = scores[index].item() + self.length_rewarding * (timesteps + 1)
            hyps_and_scores[batch_id].append((alived_seq[index, :], final_scores))
        return is_eos

    def forward(self, enc_states, enc_lens):
        enc_states = torch.repeat_interleave(enc_states, self.beam_size, dim=0)
        batch_size = enc_states.shape[0] // self.beam_size
        memory = (torch.zeros(batch_size * self.beam_size, self.dec.rnn.hidden_size),
                  torch.zeros(batch_size * self.beam_size, enc_states.shape[-1]))
        inp_tokens = torch.zeros(batch_size * self.beam_size).fill_(self.bos_index).long()
        beam_offset = torch.arange(batch_size) * self.beam_size
        sequence_scores = torch.empty(batch_size * self.beam_size).fill_(float("-inf"))
        sequence_scores.index_fill_(0, beam_offset, 0.0)
        hyps_and_scores = [[] for _ in range(batch_size)]
        alived_seq = torch.empty(batch_size * self.beam_size, 0).long()
        max_decode_steps = int(enc_states.shape[1] * self.max_decode_ratio)

        for t in range(max_decode_steps):
            log_probs, memory, attn = self.forward_step(inp_tokens, memory, enc_states, enc_lens)
            vocab_size = log_probs.shape[-1]

            scores = sequence_scores.unsqueeze(1).expand(-1, vocab_size)
            scores = scores + log_probs
            if self.length_normalization:
                scores = scores / (t + 1)

            # keep topk beams
            scores, candidates = scores.view(batch_size, -1).topk(self.beam_size, dim=-1)
            inp_tokens = (candidates % vocab_size).view(batch_size * self.beam_size)
            scores = scores.view(batch_size * self.beam_size)
            sequence_scores = scores
            if self.length_normalization:
                sequence_scores = sequence_scores * (t + 1)

            predecessors = (candidates // vocab_size + beam_offset.unsqueeze(1).expand_as(candidates)).view(
                batch_size * self.beam_size)
            memory = self.permute_mem(memory, index=predecessors)

            if self.coverage_penalty:
                cur_attn = torch.index_select(attn, dim=0, index=predecessors)
                if t == 0:
                    self.coverage = cur_attn
                else:
                    self.coverage += cur_attn
                    penalty = torch.max(self.coverage, self.coverage.clone().fill_(0.5)).sum(-1)
                    penalty -= self.coverage.size(-1) * 0.5
                    penalty = penalty.view(batch_size * self.beam_size)
                    scores -= penalty * 1  # <-- IPL002

            alived_seq = torch.cat([torch.index_select(alived_seq, dim=0, index=predecessors),
                                    inp_tokens.unsqueeze(1)], dim=-1)
            is_eos = self._update_hyp_and_scores(inp_tokens, alived_seq, hyps_and_scores, scores, timesteps=t)
            sequence_scores.masked_fill_(is_eos, float("-inf"))

        top_scores = [max(s for _, s in hyps) if hyps else 0.0 for hyps in hyps_and_scores]
        return torch.tensor(top_scores), alived_seq


def main():
    emb = nn.Embedding(6, 4)
    dec = AttentionalRNNDecoder(emb_dim=4, enc_dim=5, hidden_size=8)
    fc = nn.Linear(8, 6)
    searcher = S2SRNNBeamSearcher(emb, dec, fc, bos_index=0, eos_index=1, beam_size=3)
    enc_states = torch.randn(2, 7, 5)
    enc_lens = torch.ones(2)
    with torch.no_grad():
        top_scores, alived_seq = searcher(enc_states, enc_lens)
    return top_scores, alived_seq.float()


top_scores, hyps = main()
