# label: safe
# why: `scores /= self.running.std` divides a tensor that `torch.tensor(scores)` just copied from the reward-model outputs, and compute_rewards adds the score into a `.clone()` of the KL penalty, so neither in-place write touches a caller's tensor or anything saved for backward.
# source: https://github.com/huggingface/trl/pull/727 (pre-fix PPOTrainer.step, commit 5a90ce25331ae0b042db55dc0de97953745e8e20 parent)
from types import SimpleNamespace
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RunningMoments:
    def __init__(self):
        self.mean = 0
        self.std = 1
        self.var = 1
        self.count = 1e-24

    @torch.no_grad()
    def update(self, xs: torch.Tensor) -> Tuple[float, float]:
        xs_count = xs.numel()
        xs_var, xs_mean = torch.var_mean(xs, unbiased=False)
        xs_mean, xs_var = xs_mean.float(), xs_var.float()
        delta = xs_mean - self.mean
        tot_count = self.count + xs_count
        new_sum = xs_var * xs_count
        old_sum = self.var * self.count + delta ** 2 * self.count * xs_count / tot_count
        tot_sum = old_sum + new_sum
        self.mean += delta * xs_count / tot_count
        self.var = tot_sum / tot_count
        self.std = (self.var * tot_count / (tot_count - 1)).float().sqrt()
        self.count = tot_count
        return xs_mean.item(), (xs_var * xs_count / (xs_count - 1)).float().sqrt().item()


class PPOTrainer:
    def __init__(self, model, ref_model, config):
        self.model = model
        self.ref_model = ref_model
        self.config = config
        self.running = RunningMoments()
        self.kl_ctl = SimpleNamespace(value=0.2)

    def _kl_penalty(self, logprob, ref_logprob):
        return logprob - ref_logprob

    def compute_rewards(self, scores, logprobs, ref_logprobs, masks):
        rewards, non_score_rewards = [], []
        for score, logprob, ref_logprob, mask in zip(scores, logprobs, ref_logprobs, masks):
            kl = self._kl_penalty(logprob, ref_logprob)
            non_score_reward = -self.kl_ctl.value * kl
            non_score_rewards.append(non_score_reward)
            reward = non_score_reward.clone()
            last_non_masked_index = mask.nonzero()[-1]
            reward[last_non_masked_index] += score
            rewards.append(reward)
        return torch.stack(rewards), torch.stack(non_score_rewards)

    def logprobs_of(self, model, queries, responses):
        logits = model(queries)
        return torch.gather(F.log_softmax(logits, -1), 2, responses.unsqueeze(-1)).squeeze(-1)

    def step(self, queries, responses, scores, response_masks):
        scores = torch.tensor(scores)
        if self.config.use_score_scaling:
            scores_mean, scores_std = self.running.update(scores)
            if self.config.use_score_norm:
                scores = (scores - self.running.mean) / self.running.std
            else:
                scores /= self.running.std

        if self.config.score_clip is not None:
            scores_dtype = scores.dtype
            scores = torch.clip(scores.float(), -self.config.score_clip, self.config.score_clip).to(dtype=scores_dtype)

        with torch.no_grad():
            old_logprobs = self.logprobs_of(self.model, queries, responses)
            ref_logprobs = self.logprobs_of(self.ref_model, queries, responses)
        rewards, non_score_reward = self.compute_rewards(scores, old_logprobs, ref_logprobs, response_masks)

        returns = rewards.flip(-1).cumsum(-1).flip(-1)
        advantages = (returns - returns.mean()) / (returns.std() + 1e-8)
        logprobs = self.logprobs_of(self.model, queries, responses)
        ratio = torch.exp(logprobs - old_logprobs)
        pg_losses = -advantages * ratio
        pg_losses2 = -advantages * torch.clamp(ratio, 0.8, 1.2)
        pg_loss = (torch.max(pg_losses, pg_losses2) * response_masks).sum() / response_masks.sum()
        pg_loss.backward()
        return pg_loss.detach(), scores


class TinyPolicy(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.head(torch.tanh(self.emb(ids)))


def main():
    config = SimpleNamespace(use_score_scaling=True, use_score_norm=False, score_clip=None)
    model, ref_model = TinyPolicy(), TinyPolicy()
    trainer = PPOTrainer(model, ref_model, config)
    queries = torch.randint(0, 20, (3, 6))
    responses = torch.randint(0, 20, (3, 6))
    masks = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 0]])
    reward_model_scores = [torch.tensor(1.5), torch.tensor(-0.3), torch.tensor(0.7)]
    pg_loss, scaled_scores = trainer.step(queries, responses, reward_model_scores, masks)
    return pg_loss, scaled_scores, torch.stack(reward_model_scores), model.head.weight.grad


pg_loss, scaled_scores, raw_scores, head_grad = main()
