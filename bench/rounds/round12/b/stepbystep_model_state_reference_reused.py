# label: hazard silent no-twin
# why: model_state = model.state_dict() holds references to the live parameters, so the SGD run's optimizer.step() overwrites the "initial" state and the Adam comparison restarts from the trained weights instead of the initial ones
# source: https://github.com/dvgodoy/PyTorchStepByStep/pull/28
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(42)


class StepByStep(object):
    def __init__(self, model, loss_fn, optimizer):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_loader = None
        self.val_loader = None
        self.losses = []
        self.val_losses = []
        self.total_epochs = 0
        self.train_step_fn = self._make_train_step_fn()
        self.val_step_fn = self._make_val_step_fn()

    def set_loaders(self, train_loader, val_loader=None):
        self.train_loader = train_loader
        self.val_loader = val_loader

    def _make_train_step_fn(self):
        def perform_train_step_fn(x, y):
            self.model.train()
            yhat = self.model(x)
            loss = self.loss_fn(yhat, y)
            loss.backward()
            self.optimizer.step()  # <-- IPL002: updates the parameters in place while model_state still refers to them
            self.optimizer.zero_grad()
            return loss.item()
        return perform_train_step_fn

    def _make_val_step_fn(self):
        def perform_val_step_fn(x, y):
            self.model.eval()
            yhat = self.model(x)
            loss = self.loss_fn(yhat, y)
            return loss.item()
        return perform_val_step_fn

    def _mini_batch(self, validation=False):
        if validation:
            data_loader, step_fn = self.val_loader, self.val_step_fn
        else:
            data_loader, step_fn = self.train_loader, self.train_step_fn
        if data_loader is None:
            return None
        mini_batch_losses = []
        for x_batch, y_batch in data_loader:
            mini_batch_losses.append(step_fn(x_batch, y_batch))
        return np.mean(mini_batch_losses)

    def train(self, n_epochs, seed=42):
        torch.manual_seed(seed)
        for epoch in range(n_epochs):
            self.total_epochs += 1
            self.losses.append(self._mini_batch(validation=False))
            with torch.no_grad():
                self.val_losses.append(self._mini_batch(validation=True))


x = torch.rand(32, 1)
y = 1 + 2 * x + 0.1 * torch.randn(32, 1)
train_loader = DataLoader(TensorDataset(x[:24], y[:24]), batch_size=8, shuffle=True)
val_loader = DataLoader(TensorDataset(x[24:], y[24:]), batch_size=8)

model = nn.Sequential()
model.add_module('linear', nn.Linear(1, 1))
loss_fn = nn.MSELoss(reduction='mean')

model_state = model.state_dict()
initial_weight = torch.tensor([model_state['linear.weight'].item()])

model.load_state_dict(model_state)
optimizer = optim.SGD(model.parameters(), lr=0.1)
sbs_sgd = StepByStep(model, loss_fn, optimizer)
sbs_sgd.set_loaders(train_loader, val_loader)
sbs_sgd.train(10)

# reset the model to the same starting point and compare with Adam
model.load_state_dict(model_state)
restart_weight = model.linear.weight.detach().clone()
optimizer = optim.Adam(model.parameters(), lr=0.1)
sbs_adam = StepByStep(model, loss_fn, optimizer)
sbs_adam.set_loaders(train_loader, val_loader)
sbs_adam.train(10)
adam_losses = torch.tensor(sbs_adam.losses)
