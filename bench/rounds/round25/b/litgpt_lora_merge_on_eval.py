# label: safe no-twin
# why: LoRALinear.train(mode) merges (weight.data += B@A*scaling) when switching to eval and unmerges when switching back, always between optimizer steps, so the .data writes never change a weight that a pending backward saved.
# source: https://github.com/Lightning-AI/lit-llama/pull/185 ("Fix .eval() merging of LoRA weights")
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LoRALayer:
    def __init__(self, r, lora_alpha, lora_dropout, merge_weights):
        self.r = r
        self.lora_alpha = lora_alpha
        self.lora_dropout = nn.Dropout(p=lora_dropout) if lora_dropout > 0.0 else (lambda x: x)
        self.merged = False
        self.merge_weights = merge_weights


class Linear(nn.Linear, LoRALayer):
    def __init__(self, in_features, out_features, r=0, lora_alpha=1, lora_dropout=0.0, merge_weights=True):
        nn.Linear.__init__(self, in_features, out_features)
        LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout, merge_weights=merge_weights)
        if r > 0:
            self.lora_A = nn.Parameter(self.weight.new_zeros((r, in_features)))
            self.lora_B = nn.Parameter(self.weight.new_zeros((out_features, r)))
            self.scaling = self.lora_alpha / self.r
            self.weight.requires_grad = False
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        nn.init.normal_(self.lora_B, std=0.02)

    def train(self, mode: bool = True):
        nn.Linear.train(self, mode)
        if mode:
            if self.merge_weights and self.merged:
                # Make sure that the weights are not merged
                if self.r > 0:
                    self.weight.data -= (self.lora_B @ self.lora_A) * self.scaling
                self.merged = False
        else:
            if self.merge_weights and not self.merged:
                # Merge the weights and mark it
                if self.r > 0:
                    self.weight.data += (self.lora_B @ self.lora_A) * self.scaling
                self.merged = True
        return self

    def forward(self, x):
        if self.r > 0 and not self.merged:
            result = F.linear(x, self.weight, bias=self.bias)
            result = result + (self.lora_dropout(x) @ self.lora_A.transpose(0, 1) @ self.lora_B.transpose(0, 1)) * self.scaling
            return result
        return F.linear(x, self.weight, bias=self.bias)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Linear(8, 8, r=2, lora_alpha=4)
        self.mlp = Linear(8, 8, r=2, lora_alpha=4)

    def forward(self, x):
        return self.mlp(torch.tanh(self.attn(x)))


def main():
    model = Block()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    val_losses = []
    for it in range(3):
        model.train()
        x = torch.randn(4, 8)
        loss = (model(x) - x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            val_losses.append((model(torch.ones(2, 8)) - 1).pow(2).mean())
    model.train()
    return torch.stack(val_losses), model.attn.weight.detach().clone(), model.attn.lora_B.detach().clone()


val_losses, attn_weight, attn_lora_B = main()
