# label: hazard raises no-twin
# why: learn() builds the actor loss through critic_local/critic_local_2 and only then updates everything; the critic optimizers step first, rewriting the critic weights in place that the still-pending actor loss saved, so actor_loss.backward() fails (AddmmBackward version mismatch).
# source: https://github.com/p-christ/Deep-Reinforcement-Learning-Algorithms-with-PyTorch/issues/56 (agents/actor_critic_agents/SAC.py learn/update_all_parameters, SAC_Discrete.py)
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical
from torch.optim import Adam

torch.manual_seed(0)


def create_NN(input_dim, output_dim, hidden=16, softmax=False):
    layers = [nn.Linear(input_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, output_dim)]
    if softmax:
        layers.append(nn.Softmax(dim=1))
    return nn.Sequential(*layers)


class SAC_Discrete:
    def __init__(self, state_size=4, action_size=2, discount_rate=0.99, tau=0.005, lr=3e-4):
        self.state_size = state_size
        self.action_size = action_size
        self.discount_rate = discount_rate
        self.tau = tau
        self.critic_local = create_NN(state_size, action_size)
        self.critic_local_2 = create_NN(state_size, action_size)
        self.critic_optimizer = torch.optim.Adam(self.critic_local.parameters(), lr=lr)
        self.critic_optimizer_2 = torch.optim.Adam(self.critic_local_2.parameters(), lr=lr)
        self.critic_target = create_NN(state_size, action_size)
        self.critic_target_2 = create_NN(state_size, action_size)
        self.critic_target.load_state_dict(self.critic_local.state_dict())
        self.critic_target_2.load_state_dict(self.critic_local_2.state_dict())
        self.actor_local = create_NN(state_size, action_size, softmax=True)
        self.actor_optimizer = torch.optim.Adam(self.actor_local.parameters(), lr=lr)
        self.target_entropy = -np.log((1.0 / self.action_size)) * 0.98
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha = self.log_alpha.exp()
        self.alpha_optim = Adam([self.log_alpha], lr=lr)

    def produce_action_and_action_info(self, state):
        action_probabilities = self.actor_local(state)
        max_probability_action = torch.argmax(action_probabilities).unsqueeze(0)
        action_distribution = Categorical(action_probabilities)
        action = action_distribution.sample().cpu()
        z = action_probabilities == 0.0
        z = z.float() * 1e-8
        log_action_probabilities = torch.log(action_probabilities + z)
        return action, (action_probabilities, log_action_probabilities), max_probability_action

    def calculate_critic_losses(self, state_batch, action_batch, reward_batch, next_state_batch, mask_batch):
        with torch.no_grad():
            next_state_action, (_, log_action_probabilities), _ = self.produce_action_and_action_info(next_state_batch)
            next_state_log_pi = log_action_probabilities.gather(1, next_state_action.unsqueeze(-1).long())
            qf1_next_target = self.critic_target(next_state_batch).gather(1, next_state_action.unsqueeze(-1).long())
            qf2_next_target = self.critic_target_2(next_state_batch).gather(1, next_state_action.unsqueeze(-1).long())
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - self.alpha * next_state_log_pi
            next_q_value = reward_batch + (1.0 - mask_batch) * self.discount_rate * (min_qf_next_target)
        qf1 = self.critic_local(state_batch).gather(1, action_batch.long())
        qf2 = self.critic_local_2(state_batch).gather(1, action_batch.long())
        qf1_loss = F.mse_loss(qf1, next_q_value)
        qf2_loss = F.mse_loss(qf2, next_q_value)
        return qf1_loss, qf2_loss

    def calculate_actor_loss(self, state_batch):
        action, (action_probabilities, log_action_probabilities), _ = self.produce_action_and_action_info(state_batch)
        qf1_pi = self.critic_local(state_batch)
        qf2_pi = self.critic_local_2(state_batch)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        inside_term = self.alpha * log_action_probabilities - min_qf_pi
        policy_loss = action_probabilities * inside_term
        policy_loss = policy_loss.mean()
        log_action_probabilities = torch.sum(log_action_probabilities * action_probabilities, dim=1)
        return policy_loss, log_action_probabilities

    def calculate_entropy_tuning_loss(self, log_pi):
        return -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()

    def take_optimisation_step(self, optimizer, network, loss, clipping_norm=None, retain_graph=False):
        optimizer.zero_grad()
        loss.backward(retain_graph=retain_graph)
        if clipping_norm is not None:
            torch.nn.utils.clip_grad_norm_(network.parameters(), clipping_norm)
        optimizer.step()  # <-- IPL001: the critic steps update critic weights in place that the not-yet-backpropagated actor loss saved

    def soft_update_of_target_network(self, local_model, target_model, tau):
        for target_param, local_param in zip(target_model.parameters(), local_model.parameters()):
            target_param.data.copy_(tau * local_param.data + (1.0 - tau) * target_param.data)

    def update_all_parameters(self, critic_loss_1, critic_loss_2, actor_loss, alpha_loss):
        self.take_optimisation_step(self.critic_optimizer, self.critic_local, critic_loss_1, 5.0)
        self.take_optimisation_step(self.critic_optimizer_2, self.critic_local_2, critic_loss_2, 5.0)
        self.take_optimisation_step(self.actor_optimizer, self.actor_local, actor_loss, 5.0)
        self.soft_update_of_target_network(self.critic_local, self.critic_target, self.tau)
        self.soft_update_of_target_network(self.critic_local_2, self.critic_target_2, self.tau)
        if alpha_loss is not None:
            self.take_optimisation_step(self.alpha_optim, None, alpha_loss, None)
            self.alpha = self.log_alpha.exp()

    def learn(self, state_batch, action_batch, reward_batch, next_state_batch, mask_batch):
        qf1_loss, qf2_loss = self.calculate_critic_losses(state_batch, action_batch, reward_batch, next_state_batch, mask_batch)
        policy_loss, log_pi = self.calculate_actor_loss(state_batch)
        alpha_loss = self.calculate_entropy_tuning_loss(log_pi)
        self.update_all_parameters(qf1_loss, qf2_loss, policy_loss, alpha_loss)


agent = SAC_Discrete()
batch = 8
states = torch.randn(batch, 4)
actions = torch.randint(0, 2, (batch, 1)).float()
rewards = torch.randn(batch, 1)
next_states = torch.randn(batch, 4)
masks = torch.zeros(batch, 1)
agent.learn(states, actions, rewards, next_states, masks)
