# label: hazard silent
# why: inner_update writes the adapted weights through param.data, so autograd never records the adaptation step: the query loss has no path back through the inner update and the meta-parameters never receive a meta-gradient.
# source: https://github.com/KanishJebaMathewM/Truxify/issues/13118
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


class MetaLearner:
    def __init__(self, model, inner_lr=0.1, outer_lr=0.01):
        self.model = model
        self.inner_lr = inner_lr
        self.criterion = nn.MSELoss()
        self.meta_optimizer = torch.optim.SGD(self.model.parameters(), lr=outer_lr)

    def inner_update(self, model, support_x, support_y):
        adapted_model = copy.deepcopy(model)
        loss = self.criterion(adapted_model(support_x), support_y)
        grads = torch.autograd.grad(loss, adapted_model.parameters(), create_graph=True)
        for param, grad in zip(adapted_model.parameters(), grads):
            param.data -= self.inner_lr * grad  # <-- IPL007: writes the adapted weights through .data, cutting the inner step out of the graph
        return adapted_model

    def meta_train_step(self, tasks):
        meta_loss = 0.0
        for support_x, support_y, query_x, query_y in tasks:
            adapted_model = self.inner_update(self.model, support_x, support_y)
            pred = adapted_model(query_x)
            task_loss = self.criterion(pred, query_y)
            meta_loss = meta_loss + task_loss
        meta_loss = meta_loss / len(tasks)
        return meta_loss


model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
learner = MetaLearner(model)
tasks = []
for _ in range(2):
    a = torch.randn(1)
    xs, xq = torch.randn(5, 1), torch.randn(5, 1)
    tasks.append((xs, a * torch.sin(xs), xq, a * torch.sin(xq)))
meta_loss = learner.meta_train_step(tasks)
learner.meta_optimizer.zero_grad()
meta_loss.backward()
learner.meta_optimizer.step()
