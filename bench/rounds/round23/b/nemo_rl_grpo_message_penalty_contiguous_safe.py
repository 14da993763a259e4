# label: safe
# why: the fix materializes the broadcast advantages with .contiguous() before the message-level penalties, so each token position owns its memory and the in-place span writes only change the flagged message.
# source: https://github.com/NVIDIA-NeMo/RL/commit/946d64339f0ac74be35fd5f9b84993807752382b
import torch

torch.manual_seed(0)


class GRPOAdvantageEstimator:
    def __init__(self, use_leave_one_out_baseline=True, normalize_rewards=True):
        self.use_leave_one_out_baseline = use_leave_one_out_baseline
        self.normalize_rewards = normalize_rewards

    def compute_advantage(self, prompt_ids, rewards, mask):
        groups = prompt_ids.unique(return_inverse=True)[1]
        advantages = torch.empty_like(rewards)
        for g in groups.unique():
            idx = groups == g
            r = rewards[idx]
            n = r.numel()
            baseline = (r.sum() - r) / max(n - 1, 1) if self.use_leave_one_out_baseline else r.mean()
            adv = r - baseline
            if self.normalize_rewards and n > 1:
                adv = adv / (r.std() + 1e-6)
            advantages[idx] = adv
        # one advantage per sample, broadcast over its tokens
        return advantages.unsqueeze(-1).expand(mask.shape)


def _apply_message_level_advantage_penalties(train_data, message_logs, invalid_tool_call_advantage,
                                             malformed_thinking_advantage):
    """Overwrite advantages for flagged assistant-message token spans (in place)."""
    invalid_neg_adv = invalid_tool_call_advantage
    malformed_neg_adv = malformed_thinking_advantage
    if invalid_neg_adv is None and malformed_neg_adv is None:
        return
    # ``advantages`` is an expand() view (stride-0); the per-message in-place writes
    # below need a tensor with its own storage.
    train_data["advantages"] = train_data["advantages"].contiguous()
    for i, message_log in enumerate(message_logs):
        token_offset = 0
        for message in message_log:
            msg_len = len(message["token_ids"])
            is_assistant = message["role"] == "assistant"
            if is_assistant and invalid_neg_adv is not None and message.get("is_invalid_tool_call", False):
                train_data["advantages"][i, token_offset: token_offset + msg_len] = invalid_neg_adv
            elif is_assistant and malformed_neg_adv is not None and message.get("has_malformed_thinking", False):
                train_data["advantages"][i, token_offset: token_offset + msg_len] = malformed_neg_adv
            token_offset += msg_len


def main():
    message_logs = [
        [{"role": "user", "token_ids": [1, 2, 3]}, {"role": "assistant", "token_ids": [4, 5]}],
        [{"role": "user", "token_ids": [1, 2, 3]},
         {"role": "assistant", "token_ids": [6, 7], "is_invalid_tool_call": True}],
        [{"role": "user", "token_ids": [8, 9, 3]}, {"role": "assistant", "token_ids": [4, 4]}],
        [{"role": "user", "token_ids": [8, 9, 3]},
         {"role": "assistant", "token_ids": [2, 1], "has_malformed_thinking": True}],
    ]
    token_mask = torch.ones(4, 5)
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.2])
    prompt_ids = torch.tensor([0, 0, 1, 1])
    train_data = {"token_mask": token_mask}
    train_data["advantages"] = GRPOAdvantageEstimator().compute_advantage(prompt_ids, rewards, token_mask)
    _apply_message_level_advantage_penalties(train_data, message_logs, -1.0, -0.5)

    logprobs = torch.randn(4, 5, requires_grad=True)
    loss = -(train_data["advantages"] * logprobs * token_mask).sum() / token_mask.sum()
    loss.backward()
    return train_data["advantages"].clone(), logprobs.grad.clone()


advantages, grad = main()
