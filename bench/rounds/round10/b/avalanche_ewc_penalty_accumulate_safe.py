# label: safe
# why: the EWC plugin accumulates its penalty with += into a fresh zero tensor and adds it to strategy.loss with +=; neither tensor is saved by an op that runs before, so the in-place sums are harmless.
# source: https://github.com/ContinualAI/avalanche/blob/8a75da6f1c9a92fcaa60a024f7037366273eae6e/avalanche/training/plugins/ewc.py
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def copy_params_dict(model):
    return {k: p.detach().clone() for k, p in model.named_parameters()}


def zerolike_params_dict(model):
    return {k: torch.zeros_like(p) for k, p in model.named_parameters()}


class Clock:
    def __init__(self):
        self.train_exp_counter = 0


class Strategy:
    def __init__(self, model, optimizer, criterion):
        self.model = model
        self.optimizer = optimizer
        self._criterion = criterion
        self.clock = Clock()
        self.device = "cpu"
        self.loss = None


class EWCPlugin:
    def __init__(self, ewc_lambda, mode="separate"):
        self.ewc_lambda = ewc_lambda
        self.mode = mode
        self.saved_params = defaultdict(dict)
        self.importances = defaultdict(dict)

    def before_backward(self, strategy, **kwargs):
        exp_counter = strategy.clock.train_exp_counter
        if exp_counter == 0:
            return
        penalty = torch.tensor(0).float().to(strategy.device)
        if self.mode == "separate":
            for experience in range(exp_counter):
                for k, cur_param in strategy.model.named_parameters():
                    # new parameters do not count
                    if k not in self.saved_params[experience]:
                        continue
                    saved_param = self.saved_params[experience][k]
                    imp = self.importances[experience][k]
                    new_shape = cur_param.shape
                    penalty += (imp.expand(new_shape) * (cur_param - saved_param.expand(new_shape)).pow(2)).sum()
        strategy.loss += self.ewc_lambda * penalty

    def after_training_exp(self, strategy, data):
        exp_counter = strategy.clock.train_exp_counter
        importances = zerolike_params_dict(strategy.model)
        for x, y in data:
            strategy.optimizer.zero_grad()
            loss = strategy._criterion(strategy.model(x), y)
            loss.backward()
            for k, p in strategy.model.named_parameters():
                if p.grad is not None:
                    importances[k] += p.grad.detach().pow(2)
        for k in importances:
            importances[k] /= float(len(data))
        self.importances[exp_counter] = importances
        self.saved_params[exp_counter] = copy_params_dict(strategy.model)


def train_experience(strategy, plugin, data):
    for x, y in data:
        strategy.optimizer.zero_grad()
        strategy.loss = strategy._criterion(strategy.model(x), y)
        plugin.before_backward(strategy)
        strategy.loss.backward()
        strategy.optimizer.step()
    plugin.after_training_exp(strategy, data)
    strategy.clock.train_exp_counter += 1


model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 4))
strategy = Strategy(model, torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss())
plugin = EWCPlugin(ewc_lambda=10.0)
experiences = [[(torch.randn(6, 5), torch.randint(0, 2, (6,))) for _ in range(2)],
               [(torch.randn(6, 5), torch.randint(2, 4, (6,))) for _ in range(2)]]
for data in experiences:
    train_experience(strategy, plugin, data)
final_loss = strategy.loss.detach()
probe_logits = model(torch.randn(3, 5)).detach()
