# label: hazard silent
# why: the MAML inner update writes the adapted weights through param.data, which cuts the adaptation step out of the graph, so the query loss never back-propagates into the meta-model and its gradients stay None.
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
            param.data -= self.inner_lr * grad  # <-- IPL007: .data write detaches the adapted weights from the meta graph
        return adapted_model

    def meta_train_step(self, tasks):
        meta_loss = 0.0
        for support_x, support_y, query_x, query_y in tasks:
            adapted_model = self.inner_update(self.model, support_x, support_y)
            pred = adapted_model(query_x)
            task_loss = self.criterion(pred, query_y)
            meta_loss += task_loss
        meta_loss = meta_loss / len(tasks)
        self.meta_optimizer.zero_grad()
        meta_loss.backward()
        return meta_loss.detach()


model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
learner = MetaLearner(model)
tasks = [(torch.randn(5, 3), torch.randn(5, 1), torch.randn(5, 3), torch.randn(5, 1)) for _ in range(2)]
meta_loss = learner.meta_train_step(tasks)
first_layer_grad = model[0].weight.grad
