# label: safe
# why: KTOTrainer._compute_loss zeroes padded positions with `per_token_logps[mask == 0] = 0.0` on the output of selective_log_softmax (a subtraction nobody saved) and adds the MoE router loss with `loss += self.aux_loss_coef * aux_loss` on a nanmean result; neither tensor is saved for backward, so the KTO loss backpropagates (the commit's rewrite to `loss = loss + ...` was for the config rename).
# source: https://github.com/huggingface/trl/commit/f7ceea7287a5564b4de3f2b360d91817668bf9d4
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def selective_log_softmax(logits, index):
    selected_logits = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
    # loop to reduce peak mem consumption
    logsumexp_values = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
    per_token_logps = selected_logits - logsumexp_values  # log_softmax(x_i) = x_i - logsumexp(x)
    return per_token_logps


def load_balancing_loss_func(router_logits, num_experts, top_k=2):
    routing_weights = F.softmax(router_logits, dim=-1)
    _, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
    expert_mask = F.one_hot(selected_experts, num_experts).float()
    tokens_per_expert = expert_mask.mean(dim=0)
    router_prob_per_expert = routing_weights.mean(dim=0)
    return (tokens_per_expert * router_prob_per_expert.unsqueeze(0)).sum() * num_experts


class TinyMoeForCausalLM(nn.Module):
    def __init__(self, vocab=20, dim=16, num_experts=4):
        super().__init__()
        self.num_experts = num_experts
        self.embed = nn.Embedding(vocab, dim)
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(num_experts)])
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, attention_mask=None, output_router_logits=False):
        h = self.embed(input_ids)
        router_logits = self.router(h)
        weights = router_logits.softmax(-1)
        expert_out = torch.stack([expert(h) for expert in self.experts], dim=-2)
        h = h + (weights.unsqueeze(-1) * expert_out).sum(-2)
        logits = self.lm_head(h)
        aux_loss = None
        if output_router_logits:
            aux_loss = load_balancing_loss_func(router_logits.reshape(-1, self.num_experts), self.num_experts)
        return SimpleNamespace(logits=logits, aux_loss=aux_loss)


class KTOTrainer:
    def __init__(self, model, ref_model, beta=0.1, desirable_weight=1.0, undesirable_weight=1.0, aux_loss_coef=0.01):
        self.model = model
        self.ref_model = ref_model
        self.beta = beta
        self.desirable_weight = desirable_weight
        self.undesirable_weight = undesirable_weight
        self.aux_loss_enabled = True
        self.aux_loss_coef = aux_loss_coef
        self.loss_type = "kto"

    def _completion_logps(self, model, batch, model_kwargs):
        outputs = model(**model_kwargs)
        shift_logits = outputs.logits[:, :-1, :]
        per_token_logps = selective_log_softmax(shift_logits, batch["input_ids"][:, 1:])
        per_token_logps[batch["completion_mask"][:, 1:] == 0] = 0.0
        return per_token_logps.sum(-1), outputs

    def _compute_loss(self, model, inputs):
        batch = inputs
        model_kwargs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
        if self.aux_loss_enabled:
            model_kwargs["output_router_logits"] = True

        completion_logps, outputs = self._completion_logps(model, batch, model_kwargs)
        if self.aux_loss_enabled:
            aux_loss = outputs.aux_loss

        bool_labels = torch.as_tensor(batch["label"], dtype=torch.bool)
        chosen_idx = torch.nonzero(bool_labels, as_tuple=False).view(-1)
        rejected_idx = torch.nonzero(~bool_labels, as_tuple=False).view(-1)
        chosen_logps = completion_logps.index_select(0, chosen_idx)
        rejected_logps = completion_logps.index_select(0, rejected_idx)

        ref_model_kwargs = {k: v for k, v in model_kwargs.items() if k != "output_router_logits"}
        with torch.no_grad():
            ref_completion_logps, _ = self._completion_logps(self.ref_model, batch, ref_model_kwargs)
        ref_chosen_logps = ref_completion_logps.index_select(0, chosen_idx)
        ref_rejected_logps = ref_completion_logps.index_select(0, rejected_idx)

        kl = torch.zeros(1)
        chosen_logratios = chosen_logps - ref_chosen_logps
        chosen_losses = 1 - F.sigmoid(self.beta * (chosen_logratios - kl))
        rejected_logratios = rejected_logps - ref_rejected_logps
        rejected_losses = 1 - F.sigmoid(self.beta * (kl - rejected_logratios))
        losses = torch.cat(
            (self.desirable_weight * chosen_losses, self.undesirable_weight * rejected_losses),
            0,
        )

        loss = losses.nanmean()
        if self.aux_loss_enabled:
            loss += self.aux_loss_coef * aux_loss

        return loss


def main():
    model = TinyMoeForCausalLM()
    ref_model = TinyMoeForCausalLM()
    ref_model.load_state_dict(model.state_dict())
    trainer = KTOTrainer(model, ref_model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)

    input_ids = torch.randint(0, 20, (6, 8))
    completion_mask = torch.zeros(6, 8, dtype=torch.long)
    completion_mask[:, 4:] = 1
    completion_mask[1, 6:] = 0
    batch = {
        "input_ids": input_ids,
        "attention_mask": torch.ones(6, 8, dtype=torch.long),
        "completion_mask": completion_mask,
        "label": [True, False, True, True, False, False],
    }
    losses = []
    for _ in range(2):
        loss = trainer._compute_loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses), model.router.weight.detach().clone()


losses, router_weight = main()
