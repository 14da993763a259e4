# label: safe
# why: OptionCriticAgent builds advantage_omg = q_prev_omg - v_prev_omg and adds the termination regularizer in place; the subtraction saves neither operand nor result, and the advantage is detached before the beta loss uses it.
# source: https://github.com/ShangtongZhang/DeepRL/commit/ddc732c9734c66f2bb22b7617ed33b1d6c79da06 (OptionCriticAgent.step as it was before this "Update option-critic" commit)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Config:
    discount = 0.99
    termination_regularizer = 0.01
    entropy_weight = 0.01
    gradient_clip = 5.0


class OptionCriticNet(nn.Module):
    def __init__(self, state_dim, action_dim, num_options):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(state_dim, 16), nn.ReLU())
        self.fc_q = nn.Linear(16, num_options)
        self.fc_pi = nn.Linear(16, num_options * action_dim)
        self.fc_beta = nn.Linear(16, num_options)
        self.num_options, self.action_dim = num_options, action_dim

    def forward(self, x):
        phi = self.body(x)
        q = self.fc_q(phi)
        pi = self.fc_pi(phi).view(-1, self.num_options, self.action_dim)
        beta = torch.sigmoid(self.fc_beta(phi))
        return q, beta, F.log_softmax(pi, dim=-1)


def tensor(x):
    return torch.as_tensor(x, dtype=torch.float32)


def main():
    config = Config()
    network = OptionCriticNet(4, 3, 2)
    rollout = []
    for _ in range(3):
        states = torch.randn(5, 4)
        q_options, betas, log_pi_all = network(states)
        options = torch.randint(0, 2, (5,))
        actions = torch.randint(0, 3, (5,))
        log_pi = log_pi_all[torch.arange(5), options]
        rollout.append([q_options, betas, options, torch.randint(0, 2, (5,)), torch.randn(5), torch.ones(5),
                        torch.zeros(5), log_pi, actions])
    returns = torch.zeros(5, 1)

    processed_rollout = [None] * (len(rollout))
    for i in reversed(range(len(rollout))):
        q_options, betas, options, prev_options, rewards, terminals, is_initial_betas, log_pi, actions = rollout[i]
        options = options.unsqueeze(1).long()
        prev_options = prev_options.unsqueeze(1).long()
        terminals = terminals.unsqueeze(1)
        rewards = rewards.unsqueeze(1)
        is_initial_betas = is_initial_betas.unsqueeze(1)
        returns = rewards + config.discount * terminals * returns

        q_omg = q_options.gather(1, options)
        log_action_prob = log_pi.gather(1, actions.unsqueeze(1))
        entropy_loss = (log_pi.exp() * log_pi).sum(-1).unsqueeze(1)

        q_prev_omg = q_options.gather(1, prev_options)
        v_prev_omg = torch.max(q_options, dim=1, keepdim=True)[0]
        advantage_omg = q_prev_omg - v_prev_omg
        advantage_omg.add_(config.termination_regularizer)
        betas = betas.gather(1, prev_options)
        betas = betas * (1 - is_initial_betas)
        processed_rollout[i] = [q_omg, returns, betas, advantage_omg.detach(), log_action_prob, entropy_loss]

    q_omg, returns, beta_omg, advantage_omg, log_action_prob, entropy_loss = map(
        lambda x: torch.cat(x, dim=0), zip(*processed_rollout))
    pi_loss = -(log_action_prob * (returns - q_omg.detach())) + config.entropy_weight * entropy_loss
    q_loss = 0.5 * (q_omg - returns).pow(2)
    beta_loss = beta_omg * advantage_omg
    (pi_loss.mean() + q_loss.mean() + beta_loss.mean()).backward()
    return advantage_omg, network.fc_beta.weight.grad, network.fc_q.weight.grad


advantage_omg, beta_weight_grad, q_weight_grad = main()
