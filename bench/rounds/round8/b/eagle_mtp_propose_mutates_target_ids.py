# label: hazard silent
# why: propose() aliases input_ids to the caller's target_token_ids and overwrites the last positions in place, so the verifier later reads the draft tokens instead of the target tokens
# source: https://github.com/ROCm/ATOM/pull/147
import torch
import torch.nn as nn

torch.manual_seed(0)


class DraftModel(nn.Module):
    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(2 * dim, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, hidden_states):
        x = self.fc(torch.cat([self.embed_tokens(input_ids), hidden_states], dim=-1))
        return self.lm_head(torch.tanh(x))


class EagleProposer:
    def __init__(self, model):
        self.model = model

    @torch.no_grad()
    def propose(self, target_token_ids, target_hidden_states, next_token_ids, last_token_indices):
        input_ids = target_token_ids
        input_ids[last_token_indices] = next_token_ids  # <-- IPL004: writes into the caller's target_token_ids
        logits = self.model(input_ids, target_hidden_states)
        draft_token_ids = logits[last_token_indices].argmax(dim=-1)
        return draft_token_ids


def verify(target_token_ids, draft_token_ids, target_logits):
    accepted = target_logits.argmax(dim=-1) == draft_token_ids
    return accepted, target_token_ids.float().mean()


proposer = EagleProposer(DraftModel())
# flattened batch of 2 requests with 3 tokens each
target_token_ids = torch.tensor([3, 5, 7, 2, 4, 6])
target_hidden_states = torch.randn(6, 8)
next_token_ids = torch.tensor([11, 12])
last_token_indices = torch.tensor([2, 5])

draft_token_ids = proposer.propose(target_token_ids, target_hidden_states, next_token_ids, last_token_indices)
target_logits = torch.randn(2, 16)
accepted, mean_target_id = verify(target_token_ids, draft_token_ids, target_logits)
context_ids = target_token_ids.float()
