# label: safe
# why: the fix makes ActorNetwork.forward return `torch.tanh(...).clone()`, so `target_actions += noise` writes into a copy that no backward node saved while the tanh output it was cloned from stays intact.
# source: https://github.com/Nifrec/mazerl/blob/23d9508d8b1d5560b9b820daedfdb1ebe8dd43a0/src/agent/actor_network.py
import collections

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)

HIDDEN_LAYER_1_SIZE = 32
HIDDEN_LAYER_2_SIZE = 32

Hyperparameters = collections.namedtuple(
    "Hyperparameters",
    ["action_size", "discount_rate", "learning_rate_critic", "learning_rate_actor",
     "td3_critic_train_noise_std", "td3_critic_train_noise_bound"],
)


class Network(nn.Module):
    def __init__(self, input_size, output_size):
        super().__init__()
        self.l1 = nn.Linear(input_size, HIDDEN_LAYER_1_SIZE)
        self.l2 = nn.Linear(HIDDEN_LAYER_1_SIZE, HIDDEN_LAYER_2_SIZE)
        self.out = nn.Linear(HIDDEN_LAYER_2_SIZE, output_size)

    def forward(self, t):
        t = torch.relu(self.l1(t))
        t = torch.relu(self.l2(t))
        return self.out(t)


class ActorNetwork(Network):
    def forward(self, t):
        # Need to clone() otherwise pytorch complaints about
        # having in-place operations in autograd's tensors.
        return torch.tanh(super().forward(t)).clone()


class TD3Agent:
    def __init__(self, hyperparameters, state_size):
        self.hyperparameters = hyperparameters
        action_size = hyperparameters.action_size
        self.critic = Network(state_size + action_size, 1)
        self.critic_target = Network(state_size + action_size, 1)
        self.actor = ActorNetwork(state_size, action_size)
        self.actor_target = ActorNetwork(state_size, action_size)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.actor_target.load_state_dict(self.actor.state_dict())
        self.critic_optim = optim.Adam(self.critic.parameters(), lr=hyperparameters.learning_rate_critic)

    def compute_target_action(self, next_states):
        target_actions = self.actor_target.forward(next_states)
        target_actions += torch.clamp(
            torch.empty_like(target_actions).normal_(
                mean=0, std=self.hyperparameters.td3_critic_train_noise_std),
            -1 * self.hyperparameters.td3_critic_train_noise_bound,
            self.hyperparameters.td3_critic_train_noise_bound,
        )
        return target_actions

    def update_critic_net(self, batch):
        states, actions, rewards, next_states, dones = batch
        self.critic.train()
        values = self.critic.forward(torch.cat((states, actions), dim=-1))
        target_actions = self.compute_target_action(next_states)
        target_values = self.critic_target.forward(torch.cat((next_states, target_actions), dim=-1))
        targets = rewards.unsqueeze(dim=-1) + (dones == False) * self.hyperparameters.discount_rate * target_values

        self.critic_optim.zero_grad()
        loss = ((targets - values) ** 2).mean()
        loss.backward()
        self.critic_optim.step()
        self.critic.eval()
        return loss


def main():
    hp = Hyperparameters(action_size=2, discount_rate=0.99, learning_rate_critic=1e-3,
                         learning_rate_actor=1e-3, td3_critic_train_noise_std=0.2,
                         td3_critic_train_noise_bound=0.5)
    agent = TD3Agent(hp, state_size=4)
    n = 16
    batch = (torch.randn(n, 4), torch.rand(n, 2) * 2 - 1, torch.randn(n),
             torch.randn(n, 4), torch.rand(n, 1) < 0.1)
    loss = agent.update_critic_net(batch)
    return loss.detach(), agent.critic.out.weight.clone()


loss, critic_out_weight = main()
