# label: hazard raises
# why: generation_log_probs is a split view of the log-softmax output, and scatter_ writes the combined copy scores into it in place, corrupting the output LogSoftmaxBackward saved
# source: https://github.com/allenai/allennlp/pull/2925 (commit c629093b6fbef2dea99765cd9044bb9cff5f0984)
from typing import Dict, List

import torch
import torch.nn as nn

torch.manual_seed(0)


def logsumexp(tensor: torch.Tensor, dim: int = -1, keepdim: bool = False) -> torch.Tensor:
    max_score, _ = tensor.max(dim, keepdim=keepdim)
    stable_vec = tensor - (max_score if keepdim else max_score.unsqueeze(dim))
    return max_score + (stable_vec.exp().sum(dim, keepdim=keepdim)).log()


def masked_log_softmax(vector: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    vector = vector + (mask + 1e-45).log()
    return torch.nn.functional.log_softmax(vector, dim=dim)


class CopyNetSeq2Seq(nn.Module):
    def __init__(self, hidden_dim, target_vocab_size, oov_index=1):
        super().__init__()
        self._target_vocab_size = target_vocab_size
        self._oov_index = oov_index
        self._output_generation_layer = nn.Linear(hidden_dim, target_vocab_size)
        self._output_copying_layer = nn.Linear(hidden_dim, hidden_dim)

    def _get_generation_scores(self, state):
        return self._output_generation_layer(state["decoder_hidden"])

    def _get_copy_scores(self, state):
        trimmed_source_outputs = state["encoder_outputs"][:, 1:-1]
        copy_projection = torch.tanh(self._output_copying_layer(trimmed_source_outputs))
        return copy_projection.bmm(state["decoder_hidden"].unsqueeze(-1)).squeeze(-1)

    def _gather_final_log_probs(self, generation_log_probs: torch.Tensor, copy_log_probs: torch.Tensor,
                                state: Dict[str, torch.Tensor]) -> torch.Tensor:
        _, trimmed_source_length = state["source_to_target"].size()
        source_token_ids = state["source_token_ids"]

        modified_log_probs_list: List[torch.Tensor] = [generation_log_probs]
        for i in range(trimmed_source_length):
            copy_log_probs_slice = copy_log_probs[:, i]
            source_to_target_slice = state["source_to_target"][:, i]
            copy_log_probs_to_add_mask = (source_to_target_slice != self._oov_index).float()
            copy_log_probs_to_add = copy_log_probs_slice + (copy_log_probs_to_add_mask + 1e-45).log()
            copy_log_probs_to_add = copy_log_probs_to_add.unsqueeze(-1)
            selected_generation_log_probs = generation_log_probs.gather(1, source_to_target_slice.unsqueeze(-1))
            combined_scores = logsumexp(torch.cat((selected_generation_log_probs, copy_log_probs_to_add), dim=1))
            generation_log_probs.scatter_(-1, source_to_target_slice.unsqueeze(-1), combined_scores.unsqueeze(-1))  # <-- IPL001: writes into a view of the saved log-softmax output
            if i < (trimmed_source_length - 1):
                source_future_occurences = (source_token_ids[:, (i + 1):] == source_token_ids[:, i].unsqueeze(-1)).float()
                future_copy_log_probs = copy_log_probs[:, (i + 1):] + (source_future_occurences + 1e-45).log()
                combined = torch.cat((copy_log_probs_slice.unsqueeze(-1), future_copy_log_probs), dim=-1)
                copy_log_probs_slice = logsumexp(combined)
            if i > 0:
                source_previous_occurences = source_token_ids[:, 0:i] == source_token_ids[:, i].unsqueeze(-1)
                duplicate_mask = (source_previous_occurences.sum(dim=-1) == 0).float()
                copy_log_probs_slice = copy_log_probs_slice + (duplicate_mask + 1e-45).log()
            left_over_copy_log_probs = copy_log_probs_slice + (1.0 - copy_log_probs_to_add_mask + 1e-45).log()
            modified_log_probs_list.append(left_over_copy_log_probs.unsqueeze(-1))

        modified_log_probs = torch.cat(modified_log_probs_list, dim=-1)
        return modified_log_probs

    def take_search_step(self, state: Dict[str, torch.Tensor]):
        trimmed_source_length = state["source_to_target"].size(1)
        generation_scores = self._get_generation_scores(state)
        copy_scores = self._get_copy_scores(state)
        all_scores = torch.cat((generation_scores, copy_scores), dim=-1)
        copy_mask = state["source_mask"][:, 1:-1].float()
        mask = torch.cat((generation_scores.new_full(generation_scores.size(), 1.0), copy_mask), dim=-1)
        log_probs = masked_log_softmax(all_scores, mask)
        generation_log_probs, copy_log_probs = log_probs.split([self._target_vocab_size, trimmed_source_length], dim=-1)
        state["copy_log_probs"] = copy_log_probs
        final_log_probs = self._gather_final_log_probs(generation_log_probs, copy_log_probs, state)
        return final_log_probs, state


group_size, source_len, hidden_dim, target_vocab_size = 2, 5, 6, 8
model = CopyNetSeq2Seq(hidden_dim, target_vocab_size)
state = {
    "decoder_hidden": torch.randn(group_size, hidden_dim),
    "encoder_outputs": torch.randn(group_size, source_len, hidden_dim),
    "source_mask": torch.ones(group_size, source_len),
    "source_to_target": torch.tensor([[3, 1, 5], [2, 2, 1]]),
    "source_token_ids": torch.tensor([[0, 1, 2], [0, 0, 1]]),
}
final_log_probs, state = model.take_search_step(state)
targets = torch.tensor([3, 9])
loss = -final_log_probs.gather(1, targets.unsqueeze(-1)).mean()
loss.backward()
