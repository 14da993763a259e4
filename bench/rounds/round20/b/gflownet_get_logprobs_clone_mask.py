# label: safe
# why: get_logprobs masks invalid actions with `logits[mask] = -inf` on a fresh clone of the policy outputs (the fixed, non-detached clone), so the in-place write touches no tensor saved for backward and gradients still reach the policy.
# source: https://github.com/alexhernandezgarcia/gflownet/commit/7ea8f9dfbf0bca2997bb3262ec0c3bd86f6a209e
import torch
import torch.nn as nn

torch.manual_seed(0)


class GFlowNetEnv:
    def __init__(self, n_dim=2, length=3):
        self.n_dim = n_dim
        self.length = length
        self.eos = tuple([0] * n_dim)
        self.action_space = [self.eos] + [
            tuple(int(i == d) for i in range(n_dim)) for d in range(n_dim)
        ]
        self.logsoftmax = torch.nn.LogSoftmax(dim=1)
        self.float = torch.float32

    def get_mask_invalid_actions_forward(self, state):
        mask = [False] * len(self.action_space)
        for idx, action in enumerate(self.action_space[1:], start=1):
            if any(s + a >= self.length for s, a in zip(state, action)):
                mask[idx] = True
        return mask

    def sample_actions_batch(self, policy_outputs, mask=None, temperature_logits=1.0):
        device = policy_outputs.device
        ns_range = torch.arange(policy_outputs.shape[0], device=device)
        logits = policy_outputs.clone().detach()
        logits /= temperature_logits
        if mask is not None:
            logits[mask] = -torch.inf
        action_indices = torch.distributions.Categorical(logits=logits).sample()
        actions = [self.action_space[idx] for idx in action_indices]
        return actions

    def get_logprobs(self, policy_outputs, actions, mask=None, states_from=None, is_backward=False):
        device = policy_outputs.device
        ns_range = torch.arange(policy_outputs.shape[0]).to(device)
        logits = policy_outputs.clone()
        if mask is not None:
            logits[mask] = -torch.inf
        action_indices = (
            torch.tensor(
                [self.action_space.index(tuple(action.tolist())) for action in actions]
            )
            .to(int)
            .to(device)
        )
        logprobs = self.logsoftmax(logits)[ns_range, action_indices]
        return logprobs


def main():
    env = GFlowNetEnv()
    forward_policy = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(), nn.Linear(16, len(env.action_space)))
    logZ = nn.Parameter(torch.zeros(1))

    states = [[0, 0], [1, 0], [2, 1], [0, 2]]
    states_t = torch.tensor(states, dtype=env.float)
    masks = torch.tensor([env.get_mask_invalid_actions_forward(s) for s in states])
    policy_outputs = forward_policy(states_t)

    actions = env.sample_actions_batch(policy_outputs, masks)
    actions_t = torch.tensor(actions)
    logprobs = env.get_logprobs(policy_outputs, actions_t, masks)

    # trajectory-balance style loss
    log_reward = torch.tensor(0.5)
    loss = (logZ + logprobs.sum() - log_reward) ** 2
    loss.backward()
    return loss.detach(), forward_policy[0].weight.grad, logZ.grad


loss, policy_grad, logz_grad = main()
