# label: hazard silent no-twin
# why: the classical-training loop keeps best_state = few_shot_classifier.state_dict(), whose tensors alias the live weights, so the later optimizer steps overwrite the "best" state before it is reloaded.
# source: https://github.com/sicara/easy-few-shot-learning/pull/129
import torch
from torch import nn

torch.manual_seed(0)


class PrototypicalNetworks(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.prototypes = None

    def process_support_set(self, support_images, support_labels):
        support_features = self.backbone(support_images)
        n_way = int(support_labels.max()) + 1
        self.prototypes = torch.stack([support_features[support_labels == c].mean(0) for c in range(n_way)])

    def forward(self, query_images):
        z_query = self.backbone(query_images)
        return -torch.cdist(z_query, self.prototypes)


def training_epoch(model, data_loader, optimizer, loss_fn):
    all_loss = []
    model.train()
    for images, labels in data_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()  # <-- IPL002: also rewrites the tensors referenced by best_state
        all_loss.append(loss.item())
    return sum(all_loss) / len(all_loss)


def evaluate(model, val_tasks):
    correct, total = 0, 0
    with torch.no_grad():
        for support_images, support_labels, query_images, query_labels in val_tasks:
            model.process_support_set(support_images, support_labels)
            predictions = model(query_images).argmax(-1)
            correct += (predictions == query_labels).sum().item()
            total += len(query_labels)
    return correct / total


n_classes, feat = 4, 6
backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, feat))
model = nn.Sequential(backbone, nn.Linear(feat, n_classes))
few_shot_classifier = PrototypicalNetworks(backbone)
train_optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
train_loader = [(torch.randn(8, 8), torch.randint(0, n_classes, (8,))) for _ in range(3)]
val_tasks = [(torch.randn(6, 8), torch.tensor([0, 0, 1, 1, 2, 2]), torch.randn(6, 8), torch.tensor([0, 1, 2, 0, 1, 2]))]

best_state = few_shot_classifier.state_dict()
best_validation_accuracy = 0.0
for epoch in range(4):
    average_loss = training_epoch(model, train_loader, train_optimizer, loss_fn)
    validation_accuracy = evaluate(few_shot_classifier, val_tasks)
    if validation_accuracy > best_validation_accuracy:
        best_validation_accuracy = validation_accuracy
        best_state = few_shot_classifier.state_dict()

few_shot_classifier.load_state_dict(best_state)
restored_accuracy = torch.tensor(evaluate(few_shot_classifier, val_tasks))
