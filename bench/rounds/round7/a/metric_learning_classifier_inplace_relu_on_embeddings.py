# label: hazard silent
# why: the classifier MLP begins with nn.ReLU(inplace=True), so computing logits clamps the shared embeddings tensor and the metric loss computed afterwards silently sees ReLU'd embeddings.
# source: https://github.com/KevinMusgrave/powerful-benchmarker/issues/78
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    # layer_sizes[0] is the dimension of the input
    # layer_sizes[-1] is the dimension of the output
    def __init__(self, layer_sizes, final_relu=False):
        super().__init__()
        layer_list = []
        layer_sizes = [int(x) for x in layer_sizes]
        num_layers = len(layer_sizes) - 1
        final_relu_layer = num_layers if final_relu else num_layers - 1
        for i in range(len(layer_sizes) - 1):
            input_size = layer_sizes[i]
            curr_size = layer_sizes[i + 1]
            if i < final_relu_layer:
                layer_list.append(nn.ReLU(inplace=True))  # <-- IPL002, IPL004: the classifier's first ReLU clamps the caller's embeddings
            layer_list.append(nn.Linear(input_size, curr_size))
        self.net = nn.Sequential(*layer_list)
        self.last_linear = self.net[-1]

    def forward(self, x):
        return self.net(x)


class ContrastiveLoss(nn.Module):
    def __init__(self, pos_margin=0.0, neg_margin=1.0):
        super().__init__()
        self.pos_margin = pos_margin
        self.neg_margin = neg_margin

    def forward(self, embeddings, labels):
        dist = torch.cdist(embeddings, embeddings)
        same = labels[:, None] == labels[None, :]
        eye = torch.eye(len(labels), dtype=torch.bool)
        pos = F.relu(dist[same & ~eye] - self.pos_margin)
        neg = F.relu(self.neg_margin - dist[~same])
        return pos.mean() + neg.mean()


class TrainWithClassifier:
    def __init__(self, models, loss_funcs):
        self.models = models
        self.loss_funcs = loss_funcs
        self.losses = {}

    def compute_embeddings(self, data):
        trunk_output = self.models["trunk"](data)
        return self.models["embedder"](trunk_output)

    def maybe_get_logits(self, embeddings):
        return self.models["classifier"](embeddings)

    def calculate_loss(self, curr_batch):
        data, labels = curr_batch
        embeddings = self.compute_embeddings(data)
        logits = self.maybe_get_logits(embeddings)
        self.losses["metric_loss"] = self.loss_funcs["metric_loss"](embeddings, labels)
        self.losses["classifier_loss"] = self.loss_funcs["classifier_loss"](logits, labels)
        return sum(self.losses.values())


trunk = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
models = {"trunk": trunk, "embedder": MLP([8, 6]), "classifier": MLP([6, 6, 3])}
loss_funcs = {"metric_loss": ContrastiveLoss(), "classifier_loss": nn.CrossEntropyLoss()}
trainer = TrainWithClassifier(models, loss_funcs)
batch = (torch.randn(6, 3, 4, 4), torch.tensor([0, 0, 1, 1, 2, 2]))
total_loss = trainer.calculate_loss(batch)
total_loss.backward()
metric_loss = trainer.losses["metric_loss"]
