# label: safe
# why: the head's in-place dropout writes the pooled output, and the later read takes only the hidden states out of the backbone's output tuple
import torch
import torch.nn as nn

torch.manual_seed(0)
PreTrainedModel = type("PreTrainedModel", (nn.Module,), {})


class Backbone(PreTrainedModel):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, pixel_values: torch.Tensor, output_hidden_states: bool = False):
        hidden_states = self.conv(pixel_values)
        pooled = torch.flatten(self.pool(hidden_states), start_dim=1)
        extra = (hidden_states,) if output_hidden_states else None
        return tuple(v for v in [hidden_states, pooled, extra] if v is not None)


class Classifier(PreTrainedModel):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = Backbone()
        self.dropout = nn.Dropout(0.0, inplace=True)
        self.classifier = nn.Linear(4, 2)

    def forward(self, pixel_values: torch.Tensor):
        outputs = self.backbone(pixel_values, output_hidden_states=True)
        pooled_output = outputs[1]
        logits = self.classifier(self.dropout(pooled_output))
        return (logits,) + outputs[2:]


model = Classifier()
out = model(torch.randn(2, 3, 8, 8, requires_grad=True))
(out[0].sum() + out[1][0].sum()).backward()
