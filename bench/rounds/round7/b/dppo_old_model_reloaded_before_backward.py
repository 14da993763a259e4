# label: hazard raises no-twin
# why: model_old.load_state_dict(model.state_dict()) copies new weights in place into model_old after its forward produced v_pred_old (used undetached in the clipped value loss), so total_loss.backward() finds model_old's saved weights modified.
# source: https://github.com/alexis-jacq/Pytorch-DPPO/issues/9
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


class Params:
    clip = 0.2
    ent_coeff = 0.01
    num_epoch = 2
    batch_size = 8


class Model(nn.Module):
    def __init__(self, num_inputs, num_outputs, h_size_1=8, h_size_2=8):
        super(Model, self).__init__()
        self.p_fc1 = nn.Linear(num_inputs, h_size_1)
        self.p_fc2 = nn.Linear(h_size_1, h_size_2)
        self.v_fc1 = nn.Linear(num_inputs, h_size_1)
        self.v_fc2 = nn.Linear(h_size_1, h_size_2)
        self.mu = nn.Linear(h_size_2, num_outputs)
        self.log_std = nn.Parameter(torch.zeros(1, num_outputs))
        self.v = nn.Linear(h_size_2, 1)

    def forward(self, inputs):
        x = torch.tanh(self.p_fc1(inputs))
        x = torch.tanh(self.p_fc2(x))
        mu = self.mu(x)
        sigma_sq = torch.exp(self.log_std).expand_as(mu)
        v1 = torch.tanh(self.v_fc1(inputs))
        v1 = torch.tanh(self.v_fc2(v1))
        v1 = self.v(v1)
        return mu, sigma_sq, v1


class ReplayMemory(object):
    def __init__(self, capacity):
        self.capacity = capacity
        self.memory = []

    def push(self, events):
        for event in zip(*events):
            self.memory.append(event)
            if len(self.memory) > self.capacity:
                del self.memory[0]

    def sample(self, batch_size):
        samples = zip(*random.sample(self.memory, batch_size))
        return map(lambda x: torch.cat(x, 0), samples)


def normal(x, mu, std):
    a = (-1 * (x - mu).pow(2) / (2 * std)).exp()
    b = 1 / (2 * std * np.pi).sqrt()
    return a * b


params = Params
num_inputs, num_outputs = 4, 2
shared_model = Model(num_inputs, num_outputs)
model = Model(num_inputs, num_outputs)
model.load_state_dict(shared_model.state_dict())
memory = ReplayMemory(64)
memory.push([
    [torch.randn(1, num_inputs) for _ in range(32)],
    [torch.randn(1, num_outputs) for _ in range(32)],
    [torch.randn(1, 1) for _ in range(32)],
    [torch.randn(1, 1) for _ in range(32)],
])

model_old = Model(num_inputs, num_outputs)
model_old.load_state_dict(model.state_dict())
for k in range(params.num_epoch):
    # load new model
    model.load_state_dict(shared_model.state_dict())
    model.zero_grad()
    batch_states, batch_actions, batch_returns, batch_advantages = memory.sample(params.batch_size)
    # old probas
    mu_old, sigma_sq_old, v_pred_old = model_old(batch_states.detach())
    probs_old = normal(batch_actions, mu_old, sigma_sq_old)
    # new probas
    mu, sigma_sq, v_pred = model(batch_states)
    probs = normal(batch_actions, mu, sigma_sq)
    # ratio
    ratio = probs / (1e-10 + probs_old)
    # clip loss
    surr1 = ratio * torch.cat([batch_advantages] * num_outputs, 1)
    surr2 = ratio.clamp(1 - params.clip, 1 + params.clip) * torch.cat([batch_advantages] * num_outputs, 1)
    loss_clip = -torch.mean(torch.min(surr1, surr2))
    # value loss
    vfloss1 = (v_pred - batch_returns) ** 2
    v_pred_clipped = v_pred_old + (v_pred - v_pred_old).clamp(-params.clip, params.clip)
    vfloss2 = (v_pred_clipped - batch_returns) ** 2
    loss_value = 0.5 * torch.mean(torch.max(vfloss1, vfloss2))
    # entropy
    loss_ent = -params.ent_coeff * torch.mean(probs * torch.log(probs + 1e-5))
    # total
    total_loss = (loss_clip + loss_value + loss_ent)
    # before step, update old_model:
    model_old.load_state_dict(model.state_dict())  # <-- IPL001: copies into model_old's weights, saved by its forward
    # prepare for step
    total_loss.backward(retain_graph=True)
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        shared_param.grad = param.grad.clone()
