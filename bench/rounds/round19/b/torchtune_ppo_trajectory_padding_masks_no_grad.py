# label: safe
# why: the trajectory's logprobs/values/scores are produced under torch.no_grad, so masking padded positions with indexed assignment touches no graph; the PPO loss recomputes policy logprobs with grad
# source: https://github.com/meta-pytorch/torchtune/pull/1005
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, EOS = 7, 6


class TinyLM(nn.Module):
    def __init__(self, out_dim=VOCAB):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 8)
        self.head = nn.Linear(8, out_dim)

    def forward(self, tokens):
        return self.head(torch.tanh(self.emb(tokens)))


def logits_to_logprobs(logits, sequences, temperature=1.0):
    return torch.gather(F.log_softmax(logits / temperature, dim=-1), 2, sequences.unsqueeze(-1)).squeeze(-1)


class PPORecipe:
    def __init__(self):
        self._policy_model = TinyLM()
        self._ref_policy_model = TinyLM()
        self._value_model = TinyLM(out_dim=1)
        self._reward_penalty = -3.0
        self._penalise_no_eos = True
        self._optimizer = torch.optim.SGD(
            list(self._policy_model.parameters()) + list(self._value_model.parameters()), lr=0.1
        )

    def generate_trajectory(self, query_responses, context_length):
        with torch.no_grad():
            responses = query_responses[:, context_length:]
            response_padding_masks = torch.cumsum((responses == EOS).long(), dim=-1) > 1
            logits = self._policy_model(query_responses)[:, context_length - 1 : -1]
            logprobs = logits_to_logprobs(logits, responses)
            ref_logits = self._ref_policy_model(query_responses)[:, context_length - 1 : -1]
            ref_logprobs = logits_to_logprobs(ref_logits, responses)
            values = self._value_model(query_responses).squeeze(-1)[:, context_length - 1 : -1]
            scores = values.sum(-1).clone()

            if self._penalise_no_eos:
                reward_penalty_mask = ~(responses == EOS).any(-1)
                scores[reward_penalty_mask] = self._reward_penalty

            logprobs[response_padding_masks] = 1.0
            ref_logprobs[response_padding_masks] = 1.0
            values[response_padding_masks] = 0.0
        return {
            "query_responses": query_responses,
            "logprobs": logprobs,
            "ref_logprobs": ref_logprobs,
            "values": values,
            "masks": (~response_padding_masks).float(),
            "scores": scores,
        }

    def ppo_step(self, traj, context_length, epsilon=0.2):
        query_responses = traj["query_responses"]
        old_logprobs, ref_logprobs = traj["logprobs"], traj["ref_logprobs"]
        old_values, masks, scores = traj["values"], traj["masks"], traj["scores"]
        responses = query_responses[:, context_length:]
        pi_logits = self._policy_model(query_responses)[:, context_length - 1 : -1]
        pi_logprobs = logits_to_logprobs(pi_logits, responses)
        phi_values = self._value_model(query_responses).squeeze(-1)[:, context_length - 1 : -1]
        rewards = scores.unsqueeze(-1) - 0.1 * (old_logprobs - ref_logprobs)
        advantages = rewards - old_values
        ratio = torch.exp(pi_logprobs - old_logprobs)
        clipped = torch.clamp(ratio, 1 - epsilon, 1 + epsilon)
        policy_loss = torch.maximum(-advantages * ratio, -advantages * clipped)
        policy_loss = (policy_loss * masks).sum() / masks.sum()
        value_loss = (((phi_values - rewards) ** 2) * masks).sum() / masks.sum()
        loss = policy_loss + 0.1 * value_loss
        self._optimizer.zero_grad()
        loss.backward()
        self._optimizer.step()
        return loss.detach()


recipe = PPORecipe()
context_length = 2
batch = torch.tensor([[1, 2, 3, 6, 4, 5], [2, 1, 4, 5, 3, 2], [3, 3, 6, 6, 1, 1]])
traj = recipe.generate_trajectory(batch, context_length)
loss = recipe.ppo_step(traj, context_length)
policy_weight = recipe._policy_model.head.weight.detach().clone()
