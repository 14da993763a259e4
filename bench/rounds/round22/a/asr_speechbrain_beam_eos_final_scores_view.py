# label: hazard silent
# why: in S2SBeamSearcher the running alived_hyps.sequence_scores is the same tensor as the step scores, and a finished hypothesis stores final_scores = scores[index] (a view); blocking finished beams with sequence_scores.masked_fill_(is_eos, minus_inf) then overwrites that stored score, so every eos hypothesis is ranked with score minus_inf.
# source: https://github.com/speechbrain/speechbrain/commit/44229d86e42c3fe66117baf441903d563d2e42ea ("fix issue with score being -inf", part of PR #2253 "Fix beam search")
import torch
import torch.nn as nn

torch.manual_seed(0)


class AlivedHypotheses(torch.nn.Module):
    """Handle the data for the hypotheses during the decoding."""

    def __init__(self, alived_seq, alived_log_probs, sequence_scores):
        super().__init__()
        self.alived_seq = alived_seq
        self.alived_log_probs = alived_log_probs
        self.sequence_scores = sequence_scores


class S2SRNNBeamSearcher(torch.nn.Module):
    def __init__(self, embedding, decoder, linear, bos_index=0, eos_index=1, beam_size=3,
                 max_decode_ratio=1.0, length_normalization=False, topk=1):
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
        self.topk = topk
        self.minus_inf = -1e20

    def forward_step(self, inp_tokens, memory, enc_states):
        hs = self.dec(torch.cat([self.emb(inp_tokens), enc_states.mean(1)], dim=-1), memory)
        log_probs = self.softmax(self.fc(hs))
        return log_probs, hs

    def _compute_scores_and_next_inp_tokens(self, alived_hyps, log_probs, step):
        scores = alived_hyps.sequence_scores.unsqueeze(1).expand(-1, self.n_out)
        scores = scores + log_probs
        # length normalization
        if self.length_normalization:
            scores = scores / (step + 1)
        # keep topk beams
        scores, candidates = scores.view(self.batch_size, -1).topk(self.beam_size, dim=-1)
        # The input for the next step, also the output of current step.
        inp_tokens = (candidates % self.n_out).view(self.n_bh)
        scores = scores.view(self.n_bh)
        alived_hyps.sequence_scores = scores
        # recover the length normalization
        if self.length_normalization:
            alived_hyps.sequence_scores = alived_hyps.sequence_scores * (step + 1)
        # The index of which beam the current top-K output came from in (t-1) steps.
        predecessors = (torch.div(candidates, self.n_out, rounding_mode="floor")
                        + self.beam_offset.unsqueeze(1).expand_as(candidates)).view(self.n_bh)
        return scores, candidates, predecessors, inp_tokens, alived_hyps

    def _update_hyps_and_scores_if_eos_token(self, inp_tokens, alived_hyps, eos_hyps_and_log_probs_scores, scores):
        is_eos = inp_tokens.eq(self.eos_index)
        (eos_indices,) = torch.nonzero(is_eos, as_tuple=True)
        # Store the hypothesis and their scores when reaching eos.
        if eos_indices.shape[0] > 0:
            for index in eos_indices:
                index = index.item()
                batch_id = torch.div(index, self.beam_size, rounding_mode="floor")
                if len(eos_hyps_and_log_probs_scores[batch_id]) == self.beam_size:
                    continue
                hyp = alived_hyps.alived_seq[index, :]
                log_probs = alived_hyps.alived_log_probs[index, :]
                final_scores = scores[index]
                eos_hyps_and_log_probs_scores[batch_id].append((hyp, log_probs, final_scores))
        # Block the paths that have reached eos.
        alived_hyps.sequence_scores.masked_fill_(is_eos, self.minus_inf)  # <-- IPL002

    def _get_topk_prediction(self, eos_hyps_and_log_probs_scores):
        top_scores = []
        for i in range(len(eos_hyps_and_log_probs_scores)):
            hyps, log_probs, scores = zip(*eos_hyps_and_log_probs_scores[i])
            top_scores += scores
        top_scores = torch.stack((top_scores), dim=0).view(self.batch_size, -1)
        topk_scores, indices = top_scores.topk(self.topk, dim=-1)
        return topk_scores, top_scores

    def forward(self, enc_states):
        self.batch_size = enc_states.shape[0]
        self.n_bh = self.batch_size * self.beam_size
        self.n_out = self.fc.out_features
        self.beam_offset = torch.arange(self.batch_size) * self.beam_size
        enc_states = torch.repeat_interleave(enc_states, self.beam_size, dim=0)
        memory = torch.zeros(self.n_bh, self.dec.hidden_size)
        inp_tokens = torch.zeros(self.n_bh).fill_(self.bos_index).long()
        alived_hyps = AlivedHypotheses(
            alived_seq=torch.empty(self.n_bh, 0).long(),
            alived_log_probs=torch.empty(self.n_bh, 0),
            sequence_scores=torch.empty(self.n_bh).fill_(self.minus_inf).index_fill_(0, self.beam_offset, 0.0),
        )
        eos_hyps_and_log_probs_scores = [[] for _ in range(self.batch_size)]
        max_decode_steps = int(enc_states.shape[1] * self.max_decode_ratio)

        for step in range(max_decode_steps):
            log_probs, memory = self.forward_step(inp_tokens, memory, enc_states)
            scores, candidates, predecessors, inp_tokens, alived_hyps = self._compute_scores_and_next_inp_tokens(
                alived_hyps, log_probs, step)
            memory = torch.index_select(memory, dim=0, index=predecessors)
            alived_hyps.alived_seq = torch.cat(
                [torch.index_select(alived_hyps.alived_seq, dim=0, index=predecessors), inp_tokens.unsqueeze(1)], dim=-1)
            beam_log_probs = log_probs.reshape(self.batch_size, -1)[
                torch.arange(self.batch_size).unsqueeze(1), candidates].reshape(self.n_bh)
            alived_hyps.alived_log_probs = torch.cat(
                [torch.index_select(alived_hyps.alived_log_probs, dim=0, index=predecessors),
                 beam_log_probs.unsqueeze(1)], dim=-1)
            self._update_hyps_and_scores_if_eos_token(inp_tokens, alived_hyps, eos_hyps_and_log_probs_scores, scores)
            if all(len(h) >= self.beam_size for h in eos_hyps_and_log_probs_scores):
                break

        # Using all eos to fill-up the hyps.
        eos = torch.zeros(self.n_bh).fill_(self.eos_index).long()
        self._update_hyps_and_scores_if_eos_token(eos, alived_hyps, eos_hyps_and_log_probs_scores, alived_hyps.sequence_scores)
        return self._get_topk_prediction(eos_hyps_and_log_probs_scores)


def main():
    emb = nn.Embedding(5, 4)
    dec = nn.GRUCell(4 + 6, 8)
    fc = nn.Linear(8, 5)
    with torch.no_grad():
        fc.bias[1] += 1.0  # make eos likely so some beams finish early
    searcher = S2SRNNBeamSearcher(emb, dec, fc, bos_index=0, eos_index=1, beam_size=3)
    enc_states = torch.randn(2, 6, 6)
    with torch.no_grad():
        topk_scores, all_scores = searcher(enc_states)
    return topk_scores, all_scores


topk_scores, all_scores = main()
