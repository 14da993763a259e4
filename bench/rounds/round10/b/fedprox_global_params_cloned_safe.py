# label: safe
# why: the fix snapshots the global weights with clone().detach(), so optimizer steps no longer move the proximal anchor and the in-place gradient correction reads the right reference.
# source: https://github.com/KarhouTam/FL-bench/issues/165
import torch
import torch.nn as nn

torch.manual_seed(0)


class Args:
    class fedprox:
        mu = 0.5


class FedProxClient:
    def __init__(self, model, trainloader, args):
        self.model = model
        self.trainloader = trainloader
        self.args = args
        self.local_epoch = 2
        self.device = "cpu"
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def fit(self):
        self.model.train()
        global_params = [w.clone().detach() for w in self.model.parameters()]
        for _ in range(self.local_epoch):
            for x, y in self.trainloader:
                if len(x) <= 1:
                    continue
                x, y = x.to(self.device), y.to(self.device)
                logit = self.model(x)
                loss = self.criterion(logit, y)
                self.optimizer.zero_grad()
                loss.backward()
                for w, w_t in zip(self.model.parameters(), global_params):
                    if w.requires_grad:
                        w.grad.data += self.args.fedprox.mu * (w.data - w_t.data)
                self.optimizer.step()


model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
trainloader = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)]
client = FedProxClient(model, trainloader, Args())
client.fit()
probe = torch.randn(6, 5)
local_logits = model(probe).detach()
