# label: hazard raises
# why: the beam searcher stores each finished hypothesis score by slice-assigning it into hyps_and_scores["scores"], a buffer created with torch.zeros(..., requires_grad=True), i.e. an in-place write into a view of a leaf that requires grad while mWER training needs the scores' gradient.
# source: https://github.com/speechbrain/speechbrain/commit/b7dd258622f1d146417f0a9609c1e91fcedd1f50 (pre-fix speechbrain/decoders/seq2seq.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class S2SBeamSearcher(nn.Module):
    def __init__(self, decoder, bos_index=0, eos_index=1, beam_size=2, topk=2, length_rewarding=0.1, max_decode_steps=4):
        super().__init__()
        self.decoder = decoder
        self.bos_index = bos_index
        self.eos_index = eos_index
        self.beam_size = beam_size
        self.topk = topk
        self.length_rewarding = length_rewarding
        self.max_decode_steps = max_decode_steps

    def _update_hyp_and_scores(self, inp_tokens, alived_seq, alived_log_probs, hyps_and_scores, scores, timesteps):
        is_eos = inp_tokens.eq(self.eos_index)
        (eos_indices,) = torch.nonzero(is_eos, as_tuple=True)

        # Store the hypothesis and their scores when reaching eos.
        if eos_indices.shape[0] > 0:
            for index in eos_indices:
                index = index.item()
                batch_id = index // self.beam_size
                num_hyps = hyps_and_scores["num_hyps"][batch_id]
                if num_hyps == self.beam_size:
                    continue
                hyp = alived_seq[index, :]
                log_probs = alived_log_probs[index, :]
                final_scores = scores[index] + self.length_rewarding * (timesteps + 1)

                # collect hyps
                hyps_and_scores["hyps"][batch_id, num_hyps, : timesteps + 1] = hyp
                hyps_and_scores["hyps_length"][batch_id, num_hyps] = timesteps + 1
                hyps_and_scores["log_probs"][batch_id, num_hyps, : timesteps + 1] = log_probs
                scores_buf = hyps_and_scores["scores"]
                scores_buf[batch_id, num_hyps] = final_scores  # <-- IPL003
                hyps_and_scores["num_hyps"][batch_id] += 1

        return is_eos

    def _get_top_score_prediction(self, hyps_and_scores, topk):
        batch_size = len(hyps_and_scores["scores"])
        top_scores, indices = hyps_and_scores["scores"].topk(self.topk, dim=-1)
        indices = (indices + self.beam_offset.unsqueeze(1)).view(batch_size * self.topk)
        predictions = torch.index_select(
            hyps_and_scores["hyps"].view(batch_size * self.beam_size, -1), dim=0, index=indices
        )
        predictions = predictions.view(batch_size, self.topk, -1)
        return predictions, top_scores

    def forward(self, enc_states):
        batch_size = enc_states.shape[0]
        device = enc_states.device
        self.beam_offset = torch.arange(batch_size, device=device) * self.beam_size
        enc_states = enc_states.repeat_interleave(self.beam_size, dim=0)

        hyps_and_scores = {
            "hyps": torch.zeros(batch_size, self.beam_size, self.max_decode_steps, dtype=torch.long, device=device),
            "num_hyps": torch.zeros(batch_size, dtype=torch.long, device=device),
            "hyps_length": torch.zeros(batch_size, self.beam_size, dtype=torch.int32, device=device),
            "scores": torch.zeros(batch_size, self.beam_size, device=device, requires_grad=True),
            "log_probs": torch.zeros(batch_size, self.beam_size, self.max_decode_steps, device=device),
        }
        alived_seq = torch.zeros(batch_size * self.beam_size, 0, dtype=torch.long, device=device)
        alived_log_probs = torch.zeros(batch_size * self.beam_size, 0, device=device)
        scores = torch.zeros(batch_size * self.beam_size, device=device)
        for t in range(self.max_decode_steps):
            log_probs = self.decoder(enc_states, t)
            if t == self.max_decode_steps - 1:
                inp_tokens = torch.full((batch_size * self.beam_size,), self.eos_index, device=device)
            else:
                # keep beams alive until the last step; beam k takes its k-th best non-eos token
                masked = log_probs.clone().detach()
                masked[:, self.eos_index] = -1e9
                inp_tokens = masked.topk(self.beam_size, dim=-1).indices[torch.arange(batch_size * self.beam_size), torch.arange(batch_size * self.beam_size) % self.beam_size]
            token_log_probs = log_probs.gather(1, inp_tokens.unsqueeze(1)).squeeze(1)
            scores = scores + token_log_probs
            alived_seq = torch.cat([alived_seq, inp_tokens.unsqueeze(1)], dim=-1)
            alived_log_probs = torch.cat([alived_log_probs, token_log_probs.unsqueeze(1)], dim=-1)
            self._update_hyp_and_scores(inp_tokens, alived_seq, alived_log_probs, hyps_and_scores, scores, t)
        return self._get_top_score_prediction(hyps_and_scores, self.topk)


class ToyDecoder(nn.Module):
    def __init__(self, enc_dim=8, vocab=6):
        super().__init__()
        self.proj = nn.Linear(enc_dim + 1, vocab)

    def forward(self, enc_states, t):
        step = torch.full((enc_states.shape[0], 1), float(t))
        return torch.log_softmax(self.proj(torch.cat([enc_states, step], -1)), dim=-1)


def main():
    decoder = ToyDecoder()
    searcher = S2SBeamSearcher(decoder)
    enc_states = torch.randn(3, 8)
    predictions, top_scores = searcher(enc_states)
    # minimum-WER style loss: expected error under the renormalised n-best scores
    wer = torch.rand(top_scores.shape)
    loss = (torch.softmax(top_scores, dim=-1) * wer).sum()
    loss.backward()
    return top_scores.detach(), decoder.proj.weight.grad


top_scores, proj_grad = main()
